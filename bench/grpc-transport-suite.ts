import path from "node:path";
import { InferenceClient } from "../client/index";
import { type ComparisonResult, type ComparisonSide, measureThroughput, preparedSender, type RequestSender } from "../tools/perf/index";
import { startServiceProcess } from "../tools/tune/index";
import type { BenchContext } from "./bench-context";
import type { GrpcTransportPorts } from "./grpc-transport-process";
import { GrpcStreamSender, type RawInput } from "./grpc-stream-sender";
import { Http2GrpcSender } from "./http2-grpc-sender";
import { MainThreadCpuPerRequest } from "./main-thread-cpu";
import { roundRobinRatio, runRoundRobin } from "./round-robin-comparison";

const IMAGE_ELEMENTS = 3 * 224 * 224;
const HTTP = "HTTP binary";
/** The server's own endpoint (grpc-js) loaded by a lean node:http2 client instead of grpc-js's. */
const LEAN_CLIENT = "grpc-js, lean client";
const TRANSPORTS = [
  { label: "grpc-js", port: "grpcJs" }, { label: "connect-node", port: "connect" }, { label: "own http2", port: "own" },
] as const;

interface TransportCase {
  readonly name: string;
  readonly model: string;
  readonly inputs: (RawInput & { readonly datatype: "INT32" | "FP32"; readonly shape: number[] })[];
}

function cases(): TransportCase[] {
  return [
    {
      name: "simple", model: "simple",
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32" as const, shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) })),
    },
    {
      name: "600 KB tensor", model: "identity_fp32",
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, IMAGE_ELEMENTS], data: Float32Array.from({ length: IMAGE_ELEMENTS }, () => Math.random()) }],
    },
  ];
}

/**
 * The gRPC transport comparison (issue 26): the same core served over HTTP binary (the reference), the server's
 * grpc-js endpoint, @connectrpc/connect-node and a minimal transport of our own on `node:http2`, for `simple` and a
 * 600 KB FP32 tensor (identity_fp32), unary ModelInfer and ModelStreamInfer (one stream per request in flight),
 * all sides of a case alternated round-robin in one run. The gRPC load comes from one grpc-js client for every
 * transport (the repository's InferenceClient for ModelInfer), and once more for the grpc-js endpoint from a lean
 * node:http2 client ({@link Http2GrpcSender}), whose CPU per request is closer to undici's; the server's
 * main-thread CPU and the load generator's CPU per request are noted per side.
 */
export async function runGrpcTransportSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const concurrency = options.simpleConcurrency;
  const service = await startServiceProcess(
    [path.join(__dirname, "grpc-transport-process.js"), context.modelRepository],
    { http: /"http":(\d+)/, grpcJs: /"grpcJs":(\d+)/, connect: /"connect":(\d+)/, own: /"own":(\d+)/ }, 60_000, context.repositoryRoot,
  );
  const ports = service.ports as unknown as GrpcTransportPorts;
  const http = new InferenceClient({ url: `http://127.0.0.1:${ports.http}` });
  const unary = TRANSPORTS.map(({ label, port }) => ({ label, client: new InferenceClient({ url: `grpc://127.0.0.1:${ports[port]}` }) }));
  const streaming = TRANSPORTS.map(({ label, port }) => ({ label, sender: new GrpcStreamSender(`127.0.0.1:${ports[port]}`) }));
  const lean = new Http2GrpcSender(`127.0.0.1:${ports.grpcJs}`);
  const cpu = new MainThreadCpuPerRequest(service.pid!);
  // The load generator's own CPU (this process, all threads): what a side costs the client, on the same cores.
  const clientCpu = new MainThreadCpuPerRequest(process.pid, () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  });
  const window = (send: RequestSender) => measureThroughput(send, { concurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
  const results: ComparisonResult[] = [];
  try {
    context.notes.push(`gRPC transports: one child process serves one core over HTTP, grpc-js ${context.setup.grpcJs}, connect-node ${context.setup.connectNode} (gRPC protocol) and our own node:http2 transport; concurrency ${concurrency} (gRPC: one HTTP/2 channel per transport, ModelStreamInfer one stream per request in flight); load from grpc-js clients, and for the grpc-js endpoint also from a lean node:http2 client ("${LEAN_CLIENT}")`);
    for (const transportCase of cases()) {
      const prepared = (client: InferenceClient) => preparedSender(client, transportCase.model, transportCase.inputs, { inputFormat: "binary", outputFormat: "binary" });
      const side = (label: string, send: RequestSender): ComparisonSide => ({
        label, measure: () => cpu.measure(`${transportCase.name} ${label}`, send, (counted) => clientCpu.measure(`${transportCase.name} ${label}`, counted, window)),
      });
      const sides = [
        side(HTTP, prepared(http)),
        ...unary.map(({ label, client }) => side(`${label} ModelInfer`, prepared(client))),
        ...streaming.map(({ label, sender }) => side(`${label} ModelStreamInfer`, sender.sender(transportCase.model, transportCase.inputs))),
        side(`${LEAN_CLIENT} ModelInfer`, lean.unary(transportCase.model, transportCase.inputs)),
        side(`${LEAN_CLIENT} ModelStreamInfer`, lean.streaming(transportCase.model, transportCase.inputs)),
      ];
      const measured = await runRoundRobin(sides, options.rounds, (round, label, result) =>
        log(`gRPC transports ${transportCase.name} round ${round}: ${label} ${result.throughput.toFixed(0)} req/s`));
      const setting = `concurrency ${concurrency}, ${transportCase.model}`;
      for (const rpc of ["ModelInfer", "ModelStreamInfer"]) {
        for (const { label } of TRANSPORTS) results.push(roundRobinRatio(`${transportCase.name}, ${rpc}`, setting, measured, `${label} ${rpc}`, HTTP));
        for (const { label } of TRANSPORTS.slice(1)) results.push(roundRobinRatio(`${transportCase.name}, ${rpc}`, setting, measured, `${label} ${rpc}`, `grpc-js ${rpc}`));
        results.push(roundRobinRatio(`${transportCase.name}, ${rpc}`, setting, measured, `${LEAN_CLIENT} ${rpc}`, HTTP));
      }
    }
    context.notes.push(`gRPC transports: server main-thread CPU per request (median, range over rounds): ${cpu.summary()}`);
    context.notes.push(`gRPC transports: load generator CPU per request (this process, median, range over rounds): ${clientCpu.summary()}`);
    return results;
  } finally {
    for (const { sender } of streaming) sender.close();
    lean.close();
    await Promise.all([http, ...unary.map(({ client }) => client)].map((client) => client.close()));
    await service.stop();
  }
}

