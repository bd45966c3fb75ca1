import type { InferInput } from "../../client/index";
import { measureThroughput, runAbComparison, type ComparisonResult, type SideMeasurement } from "../perf/index";
import { CandidateServer } from "../tune/index";
import { toFloat16Array } from "../../protocol/float16";
import type { DataSample, ModelInputSpec } from "./calibration-data";
import { DATA_TYPE } from "./onnx-model";

/** One Triton model directory to serve, with the request it is measured on. */
export interface ServedModel {
  readonly label: string;
  readonly directory: string;
  readonly name: string;
  readonly configText: string;
  readonly input: ModelInputSpec;
}

export interface SpeedSettings {
  readonly concurrencies: readonly number[];
  readonly rounds: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export interface ConcurrencyResult {
  readonly concurrency: number;
  readonly comparison: ComparisonResult;
  /** Median over the rounds, per side. */
  readonly variant: SideMeasurement;
  readonly baseline: SideMeasurement;
}

/** A served A/B of a variant against the FP32 model, at each concurrency. */
export interface ServedSpeed {
  readonly results: readonly ConcurrencyResult[];
  /** The concurrency where the variant served the most inferences per second. */
  readonly best: ConcurrencyResult;
}

function requestOf(model: ServedModel, sample: DataSample): InferInput[] {
  // The model's own shape has batch 1 in front; a batching config counts it as the request's batch dimension.
  const shape = [...model.input.dims];
  if (model.input.elemType === DATA_TYPE.FLOAT16) {
    return [{ name: model.input.name, shape, datatype: "FP16", data: toFloat16Array(sample.values) }];
  }
  return [{ name: model.input.name, shape, datatype: "FP32", data: sample.values }];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function medianSide(comparison: ComparisonResult, side: "a" | "b"): SideMeasurement {
  const rounds = comparison.rounds.map((round) => round[side]);
  return {
    throughput: median(rounds.map((r) => r.throughput)), p50Ms: median(rounds.map((r) => r.p50Ms)),
    p90Ms: median(rounds.map((r) => r.p90Ms)), p99Ms: median(rounds.map((r) => r.p99Ms)),
  };
}

/**
 * Serves the variant and the FP32 model, each on a server of its own (this package's server, as inference-tune
 * starts it), and alternates their measurements round by round at each concurrency (A B, B A, ...), so that drift
 * on a shared machine hits both alike. Both servers stay up for the whole run and are stopped after.
 */
export async function measureServedSpeed(
  variant: ServedModel, baseline: ServedModel, sample: DataSample, settings: SpeedSettings, log: (line: string) => void,
): Promise<ServedSpeed> {
  const servers: CandidateServer[] = [];
  try {
    for (const model of [variant, baseline]) {
      servers.push(await CandidateServer.start(model.directory, model.configText, { modelName: model.name, protocol: "http", metrics: false }));
    }
    const [a, b] = servers as [CandidateServer, CandidateServer];
    const sendA = a.sender(requestOf(variant, sample));
    const sendB = b.sender(requestOf(baseline, sample));
    const results: ConcurrencyResult[] = [];
    for (const concurrency of settings.concurrencies) {
      const load = { concurrency, warmupMs: settings.warmupMs, durationMs: settings.durationMs };
      const comparison = await runAbComparison(
        `${variant.label} vs ${baseline.label}`, `concurrency ${concurrency}`,
        { label: variant.label, measure: () => measureThroughput(sendA, load) },
        { label: baseline.label, measure: () => measureThroughput(sendB, load) },
        settings.rounds,
        (round, measured) => log(`  ${variant.label} c=${concurrency} round ${round}: ${measured.a.throughput.toFixed(1)} vs ${measured.b.throughput.toFixed(1)} infer/s (x${measured.ratio.toFixed(2)})`),
      );
      results.push({ concurrency, comparison, variant: medianSide(comparison, "a"), baseline: medianSide(comparison, "b") });
    }
    const best = results.reduce((top, r) => (r.variant.throughput > top.variant.throughput ? r : top));
    return { results, best };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
