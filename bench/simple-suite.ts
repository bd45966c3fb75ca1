import path from "node:path";
import { request } from "undici";
import { encodeHttpInfer, InferenceClient, type InferInput, tensorDataToBytes, type TensorFormat } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, runAbComparison } from "../tools/perf/index";
import type { BareGrpcResponse } from "./bare-grpc-process";
import type { BenchContext } from "./bench-context";
import { type ServiceProcess, startServiceProcess } from "../tools/tune/index";

const MODEL = "simple";

/** The server's exact answer (bytes and framing headers) to one binary request, for the bare route to replay. */
async function captureResponse(serverUrl: string, inputs: readonly InferInput[]): Promise<{ bodyBase64: string; headers: Record<string, string> }> {
  const encoded = encodeHttpInfer({
    modelName: MODEL, modelVersion: undefined, id: undefined, parameters: {}, outputs: undefined, outputFormat: "binary",
    inputs: inputs.map((input) => ({ name: input.name, datatype: "INT32", shape: input.shape, data: input.data as Int32Array, format: "binary", parameters: {} })),
  });
  const response = await request(`${serverUrl}/v2/models/${MODEL}/infer`, { method: "POST", body: encoded.body, headers: encoded.headers });
  const body = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode !== 200) throw new Error(`simple answered ${response.statusCode}: ${body.toString()}`);
  const headers: Record<string, string> = {};
  for (const name of ["content-type", "inference-header-content-length"]) {
    const value = response.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  return { bodyBase64: body.toString("base64"), headers };
}

/** The server's gRPC answer to the same request, for the bare gRPC server to replay. */
async function captureGrpcResponse(server: InferenceClient, inputs: readonly InferInput[]): Promise<BareGrpcResponse> {
  const result = await server.infer(MODEL, inputs);
  return {
    model_name: result.modelName, model_version: result.modelVersion,
    outputs: result.outputs.map(({ name, datatype, shape }) => ({ name, datatype, shape })),
    raw_output_contents_base64: result.outputs.map((output) => Buffer.from(tensorDataToBytes(output.datatype, output.data)).toString("base64")),
  };
}

/**
 * simple (two INT32[16] in, two out; per-request overhead dominates): the server against a bare fastify route
 * and against a bare @grpc/grpc-js handler, each answering the server's own bytes to the same load generator,
 * then the server's JSON path against its binary one.
 */
export async function runSimpleSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const concurrency = options.simpleConcurrency;
  const inputs: InferInput[] = ["INPUT0", "INPUT1"].map((name) => ({
    name, datatype: "INT32", shape: [1, 16], data: Int32Array.from({ length: 16 }, () => Math.floor(Math.random() * 100)),
  }));
  const server = new InferenceClient({ url: context.serverUrl });
  const serverGrpc = new InferenceClient({ url: `grpc://${context.serverGrpcAddress}` });
  const clients = [server, serverGrpc];
  const baselines: ServiceProcess[] = [];
  const at = (client: InferenceClient, format: TensorFormat) => () =>
    measureThroughput(preparedSender(client, MODEL, inputs, { inputFormat: format, outputFormat: format }), { concurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
  try {
    const bare = await startServiceProcess(
      [path.join(__dirname, "bare-fastify-process.js"), JSON.stringify(await captureResponse(context.serverUrl, inputs))],
      { http: /"service":"bare-fastify","port":(\d+)/ }, 30_000, context.repositoryRoot,
    );
    baselines.push(bare);
    const bareGrpc = await startServiceProcess(
      [path.join(__dirname, "bare-grpc-process.js"), JSON.stringify(await captureGrpcResponse(serverGrpc, inputs))],
      { grpc: /"service":"bare-grpc","port":(\d+)/ }, 30_000, context.repositoryRoot,
    );
    baselines.push(bareGrpc);
    const bareRoute = new InferenceClient({ url: `http://127.0.0.1:${bare.ports["http"]}` });
    const bareHandler = new InferenceClient({ url: `grpc://127.0.0.1:${bareGrpc.ports["grpc"]}` });
    clients.push(bareRoute, bareHandler);
    context.notes.push(`simple: concurrency ${concurrency} (HTTP: ${concurrency} keep-alive connections; gRPC: one HTTP/2 channel); baselines in child processes replay the server's response bytes: bare fastify ${context.setup.fastify} route, bare @grpc/grpc-js ModelInfer handler`);
    const serverVsBare = await runAbComparison(
      MODEL, `concurrency ${concurrency}, binary`,
      { label: "server", measure: at(server, "binary") },
      { label: "bare fastify", measure: at(bareRoute, "binary") },
      options.rounds,
      (round, r) => log(`simple round ${round}: server ${r.a.throughput.toFixed(0)}, bare fastify ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    );
    const serverVsBareGrpc = await runAbComparison(
      `${MODEL} over gRPC`, `concurrency ${concurrency}, raw contents`,
      { label: "server", measure: at(serverGrpc, "binary") },
      { label: "bare grpc-js", measure: at(bareHandler, "binary") },
      options.rounds,
      (round, r) => log(`simple gRPC round ${round}: server ${r.a.throughput.toFixed(0)}, bare grpc-js ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    );
    const lastRound = (result: ComparisonResult, side: "a" | "b") => result.rounds[result.rounds.length - 1]![side];
    context.chartPoints.push(
      { series: "simple server (HTTP binary)", level: concurrency, ...lastRound(serverVsBare, "a") },
      { series: "simple bare fastify", level: concurrency, ...lastRound(serverVsBare, "b") },
      { series: "simple server (gRPC)", level: concurrency, ...lastRound(serverVsBareGrpc, "a") },
      { series: "simple bare grpc-js", level: concurrency, ...lastRound(serverVsBareGrpc, "b") },
    );
    const jsonVsBinary = await runAbComparison(
      MODEL, `concurrency ${concurrency}, tensors in and out`,
      { label: "JSON", measure: at(server, "json") },
      { label: "binary", measure: at(server, "binary") },
      options.rounds,
      (round, r) => log(`simple round ${round}: JSON ${r.a.throughput.toFixed(0)}, binary ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    );
    return [serverVsBare, serverVsBareGrpc, jsonVsBinary];
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(baselines.map((baseline) => baseline.stop()));
  }
}
