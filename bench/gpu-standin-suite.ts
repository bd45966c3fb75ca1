import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { OnnxGraphBuilder } from "../tools/model-builder/index";
import { type ComparisonResult, preparedSender, type RequestSender, runAbComparison, type SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";
import { inferenceMethod, serializedInferRequest } from "./grpc-stream-sender";
import { grpcioMissing, startGrpcioLoad } from "./grpcio-load";
import { LoadProcesses, type LoadSource, measureServerLoad, startSpreadLoads, stopSpreadLoads } from "./load-processes";
import { cpuInstance, OrtBaseline } from "./ort-baseline";
import { MainThreadCpuPerRequest } from "./main-thread-cpu";
import { sweepForBest } from "./sweep-for-best";

const MODEL = "gpu_standin";
const ELEMENT_SHAPE = [3, 224, 224];
const ELEMENT_VALUES = ELEMENT_SHAPE.reduce((a, b) => a * b, 1);
const CLASSES = 1000;
/** resnet50's batch on the GPU (issue 42: max_batch_size 32, dynamic batching), the in-process side's batch too. */
const BATCH = 32;
/**
 * Past the backend's 64 KiB inline limit, so that the stand-in runs on a worker thread of its own as a GPU instance
 * does (a model that small would otherwise run on the main thread it is meant to measure).
 */
const PADDING_FLOATS = 32 * 1024;
/** In-process ONNX Runtime, WebGPU, resnet50 FP32 at batch 32 on an H200 (2026-11-27, ../shared/docs/gpu-device.md). */
const H200_RESNET50_RATE = 1065;

/**
 * resnet50's I/O (FP32 `[N,3,224,224]` in, `[N,1000]` out) with next to no compute: the input reshaped to rows and
 * its first 1000 values kept. Stands in for a GPU that takes no time, so that what limits the server is the server.
 */
function standinModel(): Buffer {
  const g = new OnnxGraphBuilder(MODEL);
  g.addInput("input", "FLOAT", ["N", ...ELEMENT_SHAPE]);
  const rows = g.addInitializer("rows", [2], BigInt64Array.from([-1n, BigInt(ELEMENT_VALUES)]));
  const starts = g.addInitializer("starts", [1], BigInt64Array.from([0n]));
  const ends = g.addInitializer("ends", [1], BigInt64Array.from([BigInt(CLASSES)]));
  const axes = g.addInitializer("axes", [1], BigInt64Array.from([1n]));
  g.addInitializer("padding", [PADDING_FLOATS], new Float32Array(PADDING_FLOATS));
  g.addNode({ opType: "Reshape", inputs: ["input", rows], outputs: ["flat"] });
  g.addNode({ opType: "Slice", inputs: ["flat", starts, ends, axes], outputs: ["output"] });
  g.addOutput("output", "FLOAT", ["N", CLASSES]);
  return g.toModelBytes();
}

function writeStandinRepository(repository: string): string {
  const dir = path.join(repository, MODEL);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  const modelPath = path.join(dir, "1", "model.onnx");
  writeFileSync(modelPath, standinModel());
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'platform: "onnxruntime_onnx"', `max_batch_size: ${BATCH}`,
    `input [ { name: "input" data_type: TYPE_FP32 dims: [ ${ELEMENT_SHAPE.join(", ")} ] } ]`,
    `output [ { name: "output" data_type: TYPE_FP32 dims: [ ${CLASSES} ] } ]`,
    "dynamic_batching { }",
    // One instance, as the GPU runs resnet50 with; one intra-op thread: there is nothing to parallelize.
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
    'parameters { key: "intra_op_thread_count" value: { string_value: "1" } }',
  ].join("\n"));
  return modelPath;
}

type Side = "http" | "grpc" | "grpcio";

const SIDE_LABELS: Readonly<Record<Side, string>> = { http: "HTTP binary", grpc: "gRPC", grpcio: "gRPC, C-core client" };

/**
 * `npm run bench -- --models gpu-standin`: the server at GPU rates without a GPU. A stand-in with resnet50's I/O
 * and next to no compute, batched up to 32 by the dynamic batcher on one instance, through the server over HTTP
 * binary and gRPC at its best concurrency, against in-process ONNX Runtime running the same model at batch 32; with
 * the server main thread's CPU per 600 KB request and the load generator's own CPU (one JS thread: when it nears a
 * whole core, the load generator and not the server is the limit, and the note says so; `--load-processes n` spreads
 * the load over n child processes then). gRPC is measured twice where Debian's python3-grpcio is installed: from
 * grpc-js, and from gRPC's C core (bench/grpcio-load-process.py), which Triton's Python and C++ clients and
 * perf_analyzer use, and which sends HTTP/2 frames as large as the server allows.
 */
export async function runGpuStandinSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-gpu-standin-"));
  const modelPath = writeStandinRepository(repository);
  const server = await startInferenceServerProcess(repository, ["--allow-metrics", "false", "--model-control-mode", "explicit", "--load-model", MODEL], context.options.serverRoot);
  const http = new InferenceClient({ url: server.httpUrl });
  const grpc = new InferenceClient({ url: `grpc://${server.grpcAddress}` });
  const data = Float32Array.from({ length: ELEMENT_VALUES }, () => Math.random());
  const inputs: InferInput[] = [{ name: "input", datatype: "FP32", shape: [1, ...ELEMENT_SHAPE], data }];
  const senders: Record<"http" | "grpc", RequestSender> = { http: preparedSender(http, MODEL, inputs), grpc: preparedSender(grpc, MODEL, inputs) };
  const serverCpu = new MainThreadCpuPerRequest(server.process.pid!);
  const loadCpu = new Map<Side, number[]>();
  const sources = new Map<Side, LoadSource>();
  const serverAt = (side: Side, concurrency: number, durationMs = options.windowMs) => async (): Promise<SideMeasurement> => {
    const load = { concurrency, warmupMs: options.warmupMs, durationMs };
    const { measured, cpuShares } = await measureServerLoad(load, sources.get(side)!, { serverCpu, label: SIDE_LABELS[side] });
    loadCpu.set(side, [...(loadCpu.get(side) ?? []), ...cpuShares]);
    return measured;
  };
  const baseline = await OrtBaseline.start({ instance: cpuInstance(modelPath, 1), inputName: "input", inputDatatype: "FP32", elementShape: ELEMENT_SHAPE });
  const results: ComparisonResult[] = [];
  try {
    const spread = await startSpreadLoads({ http: server.httpUrl, grpc: `grpc://${server.grpcAddress}` }, { model: MODEL, inputName: "input", inputDatatype: "FP32", inputShape: [1, ...ELEMENT_SHAPE] }, options.loadProcesses);
    for (const side of ["http", "grpc"] as const) sources.set(side, spread.get(side) ?? senders[side]);
    const missing = grpcioMissing();
    if (missing === undefined) {
      const requestFile = path.join(repository, "request.bin");
      writeFileSync(requestFile, serializedInferRequest(inferenceMethod("ModelInfer"), MODEL, [{ name: "input", datatype: "FP32", shape: [1, ...ELEMENT_SHAPE], data }]));
      sources.set("grpcio", await startGrpcioLoad(server.grpcAddress!, requestFile, Math.max(1, options.loadProcesses)));
    } else {
      context.notes.push(`gpu-standin: no gRPC C-core side: ${missing}`);
    }
    const sides: Side[] = missing === undefined ? ["http", "grpc", "grpcio"] : ["http", "grpc"];
    const inProcess = { label: "in-process ORT", measure: () => baseline.measure({ batchSize: BATCH, warmupMs: options.warmupMs, durationMs: options.windowMs }) };
    for (const side of sides) {
      const { setting: concurrency } = await sweepForBest(context, {
        label: `gpu-standin sweep (${side}): server concurrency`, series: `gpu stand-in server (${side})`,
        settings: options.quick ? [32, 64] : [32, 64, 128],
        measure: (level) => serverAt(side, level, options.calibrationWindowMs)(),
      });
      results.push(await runAbComparison(
        `gpu stand-in over ${SIDE_LABELS[side]}`, `server concurrency ${concurrency}, 1 instance, dynamic batching max ${BATCH}; ORT batch ${BATCH}`,
        { label: `server ${side}`, measure: serverAt(side, concurrency) }, inProcess, options.rounds,
        (round, r) => log(`gpu-standin round ${round}: server ${side} ${r.a.throughput.toFixed(1)}, in-process ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
      ));
    }
    const share = (side: Side): string => {
      const values = loadCpu.get(side) ?? [];
      return `${SIDE_LABELS[side]} ${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
    };
    const loadProcesses = (side: Side): number => {
      const source = sources.get(side);
      return source instanceof LoadProcesses ? source.size : 1;
    };
    context.notes.push(
      `gpu-standin: resnet50's I/O (FP32 [N,3,224,224] in, [N,1000] out, 602,112 B per image), next to no compute (Reshape + Slice), max_batch_size ${BATCH}, ` +
      `dynamic batching, 1 KIND_CPU instance on a worker thread; in-process ORT: child process, the same model at batch ${BATCH}`,
      `gpu-standin: server main-thread CPU per request (median, range over windows): ${serverCpu.summary()}`,
      `gpu-standin: what the main thread alone allows (1 / its CPU per request): ${sides.map((side) => `${SIDE_LABELS[side]} ${(1000 / (serverCpu.medianMs(SIDE_LABELS[side]) ?? Infinity)).toFixed(0)} infer/s`).join(", ")}; ` +
      `to stay under 0.95 of a GPU's rate the server needs ${(H200_RESNET50_RATE / 0.95).toFixed(0)} infer/s for the H200's in-process resnet50 (${H200_RESNET50_RATE} img/s at batch 32). ` +
      "The in-process side runs no copy at all (Reshape is a view), so its figure is a ceiling, not a GPU's rate",
      `gpu-standin: load generator CPU (share of one core, each of its processes, over windows): ${sides.map((side) => `${share(side)} (${loadProcesses(side)} process${loadProcesses(side) > 1 ? "es" : ""})`).join(", ")}`,
    );
    return results;
  } finally {
    await stopSpreadLoads(sources);
    await baseline.stop();
    await http.close();
    await grpc.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}
