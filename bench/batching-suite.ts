import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { MLP_FEATURES } from "../tools/model-builder/index";
import { type ComparisonResult, measureThroughput, preparedSender, runAbComparison, summarizeRatios } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";

/** The example `mlp` under three scheduler settings; weights and instances are the same in all three. */
const VARIANTS = {
  mlp_batching: "dynamic_batching {\n  max_queue_delay_microseconds: 500\n}",
  mlp_delay0: "dynamic_batching { }",
  mlp_unbatched: "",
} as const;

function variantRepository(exampleRepository: string): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-mlp-"));
  for (const [name, scheduling] of Object.entries(VARIANTS)) {
    const dir = path.join(repository, name);
    cpSync(path.join(exampleRepository, "mlp"), dir, { recursive: true });
    writeFileSync(path.join(dir, "config.pbtxt"), [
      'platform: "onnxruntime_onnx"',
      "max_batch_size: 64",
      `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${MLP_FEATURES.input} ] } ]`,
      `output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${MLP_FEATURES.output} ] } ]`,
      scheduling,
      "instance_group [ { count: 1 kind: KIND_CPU } ]",
    ].join("\n"));
  }
  return repository;
}

/**
 * What dynamic batching buys (docs/benchmarks.md): the 2-layer MLP at concurrency 32 with batching against
 * without (throughput, and the p99 it costs), and at concurrency 1 the latency cost of the batcher itself
 * (`max_queue_delay_microseconds: 0` against no batching).
 */
export async function runBatchingSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const repository = variantRepository(context.modelRepository);
  const server = await startInferenceServerProcess(repository, ["--allow-metrics", "false", "--allow-grpc", "false"], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  const features = MLP_FEATURES.input;
  const input: InferInput[] = [{ name: "INPUT0", datatype: "FP32", shape: [1, features], data: Float32Array.from({ length: features }, (_, i) => Math.sin(i)) }];
  const at = (model: string, concurrency: number) => () =>
    measureThroughput(preparedSender(client, model, input), { concurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
  try {
    const { input: i, hidden: h, output: o } = MLP_FEATURES;
    context.notes.push(`mlp: ${i} -> ${h} -> ${o} FP32, 1 instance (intra-op threads = cores), batch-1 requests over HTTP binary; the same weights under three scheduler configs in one server`);
    const throughput = await runAbComparison(
      "mlp: dynamic batching / none", "concurrency 32, max_queue_delay 500 us",
      { label: "batching", measure: at("mlp_batching", 32) }, { label: "no batching", measure: at("mlp_unbatched", 32) },
      options.rounds,
      (round, r) => log(`mlp round ${round}: batching ${r.a.throughput.toFixed(0)} (p99 ${r.a.p99Ms.toFixed(2)} ms), none ${r.b.throughput.toFixed(0)} req/s (p99 ${r.b.p99Ms.toFixed(2)} ms)`),
    );
    const latency = await runAbComparison(
      "mlp: batching, delay 0 / none", "concurrency 1",
      { label: "delay 0", measure: at("mlp_delay0", 1) }, { label: "no batching", measure: at("mlp_unbatched", 1) },
      options.rounds,
      (round, r) => log(`mlp round ${round}: delay 0 p50 ${r.a.p50Ms.toFixed(3)} ms, none p50 ${r.b.p50Ms.toFixed(3)} ms`),
    );
    const ratio = (result: ComparisonResult, of: (r: ComparisonResult["rounds"][number]) => number): string => {
      const s = summarizeRatios(result.rounds.map(of));
      return `${s.median.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
    };
    context.notes.push(
      `mlp at concurrency 32: p99 with batching / without = ${ratio(throughput, (r) => r.a.p99Ms / r.b.p99Ms)} (goal <= 2)`,
      `mlp at concurrency 1: p50 with max_queue_delay 0 / without batching = ${ratio(latency, (r) => r.a.p50Ms / r.b.p50Ms)} (goal within 10%)`,
    );
    return [throughput, latency];
  } finally {
    await client.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}
