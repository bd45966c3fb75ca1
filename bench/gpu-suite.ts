import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { InstanceSpec } from "../server/index";
import { InferenceClient, type InferInput, type ModelConfig } from "../client/index";
import { toFloat16Array } from "../protocol/float16";
import { buildExampleRepository } from "../tools/model-builder/index";
import { type ComparisonResult, measureThroughput, preparedSender, type RequestSender, runAbComparison, type SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";
import { type LoadProcesses, measureServerLoad, startSpreadLoads, stopSpreadLoads } from "./load-processes";
import { cpuInstance, OrtBaseline } from "./ort-baseline";
import { MainThreadCpuPerRequest } from "./main-thread-cpu";
import { sweepForBest } from "./sweep-for-best";

const FP32 = "resnet50_gpu";
const UNBATCHED = "resnet50_gpu_unbatched";
const FP16 = "resnet50_fp16_gpu";
const ELEMENT_SHAPE = [3, 224, 224];
/** The concurrency of the batching comparison (issue #11: batching vs none at 64 clients). */
const BATCHING_CONCURRENCY = 64;
/**
 * GPU instances of the FP32 model the server side is swept over (issue 42: 1, 2 and 4). With one instance the GPU
 * waits while the next batch (32 x 600 KB) is gathered and the last one answered; a second instance's batch is
 * ready then. The device's sessions share one thread, so more instances add overlap, not GPU throughput.
 */
const GPU_INSTANCE_COUNTS = [1, 2, 4];

type Accelerator = InstanceSpec["accelerators"][number];

/** Reloads a model with `count` instances in each of its instance groups, through Triton's load API with a config. */
async function loadWithInstances(client: InferenceClient, shipped: ModelConfig, count: number): Promise<void> {
  await client.loadModel(shipped.name, { config: { ...shipped, instance_group: (shipped.instance_group ?? []).map((group) => ({ ...group, count })) } });
}

/** The accelerator the server chose for a KIND_GPU model, from the config it reports (cuda, tensorrt or webgpu). */
async function servedAccelerators(client: InferenceClient, model: string): Promise<Accelerator[]> {
  const config = await client.modelConfig(model) as { optimization?: { execution_accelerators?: { gpu_execution_accelerator?: Accelerator[] } } };
  const accelerators = config.optimization?.execution_accelerators?.gpu_execution_accelerator ?? [];
  if (accelerators.length === 0) throw new Error(`${model} reports no GPU accelerator: is it on the GPU? (GET /v2/models/${model}/config)`);
  return accelerators.map((a) => ({ name: a.name, parameters: a.parameters ?? {} }));
}

/**
 * `npm run bench -- --gpu`, on a machine with an NVIDIA GPU: resnet50 on the GPU through the server against
 * in-process ONNX Runtime with the same execution provider (HTTP binary and gRPC, each at the server's best
 * concurrency against the best batch size), dynamic batching against none at 64 clients, and FP16 against FP32.
 * The models come from the model builder's GPU variants, written to a temporary repository.
 */
export async function runGpuSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-gpu-"));
  await buildExampleRepository(repository, { gpu: true });
  const server = await startInferenceServerProcess(repository, ["--allow-metrics", "false", "--model-control-mode", "explicit", "--load-model", "*"], context.options.serverRoot);
  const http = new InferenceClient({ url: server.httpUrl });
  const grpc = new InferenceClient({ url: `grpc://${server.grpcAddress}` });
  const image = Float32Array.from({ length: ELEMENT_SHAPE.reduce((a, b) => a * b, 1) }, () => Math.random());
  const fp32Input: InferInput[] = [{ name: "input", datatype: "FP32", shape: [1, ...ELEMENT_SHAPE], data: image }];
  const fp16Input: InferInput[] = [{ name: "input", datatype: "FP16", shape: [1, ...ELEMENT_SHAPE], data: toFloat16Array(image) }];
  const senders: Record<string, RequestSender> = {
    [`${FP32} http`]: preparedSender(http, FP32, fp32Input),
    [`${FP32} grpc`]: preparedSender(grpc, FP32, fp32Input),
    [`${UNBATCHED} http`]: preparedSender(http, UNBATCHED, fp32Input),
    [`${FP16} http`]: preparedSender(http, FP16, fp16Input),
  };
  const serverWindow = (send: RequestSender, concurrency: number, durationMs = options.windowMs): Promise<SideMeasurement> =>
    measureThroughput(send, { concurrency, warmupMs: options.warmupMs, durationMs });
  const serverAt = (sender: string, concurrency: number, durationMs?: number) => (): Promise<SideMeasurement> => serverWindow(senders[sender]!, concurrency, durationMs);
  const serverCpu = new MainThreadCpuPerRequest(server.process.pid!);
  const results: ComparisonResult[] = [];
  let baseline: OrtBaseline | undefined;
  let spread: ReadonlyMap<"http" | "grpc", LoadProcesses> = new Map();
  /** The FP32 model over `protocol`, from the load processes where there are some; `counted` charges the server's CPU per request. */
  const fp32At = async (protocol: "http" | "grpc", concurrency: number, durationMs: number, counted = false): Promise<SideMeasurement> => {
    const load = { concurrency, warmupMs: options.warmupMs, durationMs };
    return (await measureServerLoad(load, spread.get(protocol) ?? senders[`${FP32} ${protocol}`]!, counted ? { serverCpu, label: protocol } : undefined)).measured;
  };
  try {
    spread = await startSpreadLoads({ http: server.httpUrl, grpc: `grpc://${server.grpcAddress}` }, { model: FP32, inputName: "input", inputDatatype: "FP32", inputShape: [1, ...ELEMENT_SHAPE] }, options.loadProcesses);
    const accelerators = await servedAccelerators(http, FP32);
    const shipped = await http.modelConfig(FP32);
    baseline = await OrtBaseline.start({
      instance: { ...cpuInstance(path.join(repository, FP32, "1", "model.onnx"), context.setup.cores), device: "gpu", accelerators },
      inputName: "input", inputDatatype: "FP32", elementShape: ELEMENT_SHAPE,
    });
    const concurrencies = options.quick ? [32, 64] : [16, 32, 64, 128];
    const batchSizes = options.quick ? [8, 32] : [1, 8, 16, 32];
    let best: { instances: number; concurrency: number; throughput: number } | undefined;
    for (const instances of GPU_INSTANCE_COUNTS) {
      await loadWithInstances(http, shipped, instances);
      const found = await sweepForBest(context, {
        label: `gpu sweep (${instances} GPU instances): server concurrency`, series: `resnet50 GPU server (binary, ${instances} instances)`, settings: concurrencies,
        measure: (level) => fp32At("http", level, options.calibrationWindowMs),
      });
      if (best === undefined || found.throughput > best.throughput) best = { instances, concurrency: found.setting, throughput: found.throughput };
    }
    const { instances, concurrency } = best!;
    await loadWithInstances(http, shipped, instances);
    context.notes.push(`gpu: resnet50 FP32 and FP16 (max_batch_size 32, dynamic batching) on ${accelerators.map((a) => a.name).join("+")}; server vs in-process with the better of ${GPU_INSTANCE_COUNTS.join(" or ")} GPU instances (${instances}), batching and FP16 comparisons with 1; in-process ORT: child process, the same execution provider and session options`);
    const { setting: batchSize } = await sweepForBest(context, {
      label: "gpu sweep: in-process ORT batch", series: "resnet50 GPU in-process ORT (per batch)", settings: batchSizes,
      measure: (batch) => baseline!.measure({ batchSize: batch, warmupMs: options.warmupMs, durationMs: options.calibrationWindowMs }),
    });
    const inProcess = { label: "in-process ORT", measure: () => baseline!.measure({ batchSize, warmupMs: options.warmupMs, durationMs: options.windowMs }) };
    for (const protocol of ["http", "grpc"] as const) {
      results.push(await runAbComparison(
        `resnet50 GPU over ${protocol === "http" ? "HTTP binary" : "gRPC"}`, `server concurrency ${concurrency}, ${instances} GPU instances, ORT batch ${batchSize}`,
        {
          label: `server ${protocol}`,
          measure: () => fp32At(protocol, concurrency, options.windowMs, true),
        },
        inProcess, options.rounds,
        (round, r) => log(`gpu round ${round}: server ${protocol} ${r.a.throughput.toFixed(1)}, in-process ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
      ));
    }
    context.notes.push(
      `gpu: server main-thread CPU per request (median, range over rounds): ${serverCpu.summary()}`,
      `gpu: server sides' load from ${options.loadProcesses > 1 ? `${options.loadProcesses} load processes (--load-processes)` : "this process"}`,
    );
    await baseline.stop();
    baseline = undefined;
    // Batching and precision are compared at the shipped single instance, as the unbatched and FP16 models have.
    await loadWithInstances(http, shipped, 1);
    results.push(await runAbComparison(
      "resnet50 GPU", `concurrency ${BATCHING_CONCURRENCY}, HTTP binary`,
      { label: "batching", measure: serverAt(`${FP32} http`, BATCHING_CONCURRENCY) },
      { label: "no batching", measure: serverAt(`${UNBATCHED} http`, BATCHING_CONCURRENCY) }, options.rounds,
      (round, r) => log(`gpu round ${round}: batching ${r.a.throughput.toFixed(1)}, none ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
    ));
    results.push(await runAbComparison(
      "resnet50 GPU", `server concurrency ${concurrency}, HTTP binary`,
      { label: "FP16", measure: serverAt(`${FP16} http`, concurrency) },
      { label: "FP32", measure: serverAt(`${FP32} http`, concurrency) }, options.rounds,
      (round, r) => log(`gpu round ${round}: FP16 ${r.a.throughput.toFixed(1)}, FP32 ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
    ));
    return results;
  } finally {
    await stopSpreadLoads(spread);
    await baseline?.stop();
    await http.close();
    await grpc.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}
