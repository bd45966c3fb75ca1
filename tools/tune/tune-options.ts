import path from "node:path";
import { Command, InvalidArgumentError, Option } from "@commander-js/extra-typings";
import { integer, positiveNumber, shape } from "../../common/option-parsers";
import { type LoadRange, loadRange } from "../perf/index";
import { MEANINGFUL_AB_ROUNDS } from "./ab-verdict";
import { KEPT_START_EXIT_CODE } from "./tune-summary";
import type { SearchMode } from "./run-search";
import type { SearchLists } from "./search-space";
import type { TuneConstraints } from "./tune-constraints";
import { GPU_ACCELERATORS, type GpuAccelerator } from "./tuned-settings";
import type { MeasurementSettings } from "./measure-candidate";

/** Everything `inference-tune` was asked to do, validated. Names follow Model Analyzer's where it has them. */
export interface TuneOptions {
  readonly modelName: string;
  readonly modelRepository: string;
  readonly constraints: TuneConstraints;
  readonly protocol: "http" | "grpc";
  /** Load levels every candidate is measured at; undefined: Model Analyzer's 2 x instances x max batch size. */
  readonly concurrencyRange: LoadRange | undefined;
  readonly maxConcurrency: number;
  readonly mode: SearchMode;
  readonly lists: SearchLists;
  readonly maxCandidates: number;
  readonly measurement: MeasurementSettings;
  /** A/B rounds of the pick against the starting configuration (at least 3). */
  readonly abRounds: number;
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly inputData: "random" | "zero";
  readonly outDir: string;
  readonly verbose: boolean;
}

function integerList(min: number, none?: string) {
  return (value: string): number[] => value.split(",").map((part) => {
    const text = part.trim();
    if (none !== undefined && text === none) return 0;
    const n = Number(text);
    if (text === "" || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`'${text}' is not an integer >= ${min}${none === undefined ? "" : ` or '${none}'`}`);
    }
    return n;
  });
}

function acceleratorList(value: string): GpuAccelerator[] {
  return value.split(",").map((part) => {
    const name = part.trim();
    if (!(GPU_ACCELERATORS as readonly string[]).includes(name)) throw new InvalidArgumentError(`'${name}' is not one of ${GPU_ACCELERATORS.join(", ")}`);
    return name as GpuAccelerator;
  });
}

function concurrencyRange(value: string): LoadRange {
  const range = loadRange("concurrency")(value);
  if (range.end === 0) throw new InvalidArgumentError("end 0 (grow without bound) is not available here; give the last concurrency");
  return range;
}

/** The commander program: flags, defaults and help text. */
export function buildTuneCommand() {
  return new Command("inference-tune")
    .description("Find the best model configuration for this machine (Triton Model Analyzer's profile, built in): start the server per candidate config.pbtxt, measure it the way perf_analyzer does, and write the best config under the constraints with a CSV and an HTML report")
    .requiredOption("-m, --model-name <name>", "model to tune")
    .requiredOption("--model-repository <dir>", "model repository holding the model (only read; candidates run from a temporary copy)")
    .option("--latency-budget-ms <ms>", "largest p99 latency a pick may have", positiveNumber)
    .option("--min-throughput <n>", "smallest throughput (infer/s) a pick may have", positiveNumber)
    .addOption(new Option("-i, --protocol <protocol>", "protocol of the load").choices(["http", "grpc"]).default("http"))
    .option("--concurrency-range <start:end:step>", "measure every candidate at these concurrencies (default: 2 x instances x max batch size, as Model Analyzer)", concurrencyRange)
    .option("--max-concurrency <n>", "cap on the default concurrency", integer(1), 1024)
    .option("--quick", "quick search: hill-climb from the starting config (Model Analyzer's quick mode) instead of measuring the whole grid", false)
    .option("--instance-counts <list>", "instance counts to try (default 1..min(cores, 5) on CPU, 1..5 on GPU)", integerList(1))
    .option("--intra-op-threads <list>", "ONNX Runtime intra-op threads per CPU instance to try (default 1, 2, 4, ... up to the core count; instances x threads never exceeds the cores)", integerList(1))
    .option("--max-batch-sizes <list>", "max_batch_size values to try (default 1, 2, 4, ... 64; a model with max_batch_size 0 keeps it)", integerList(1))
    .option("--queue-delays-us <list>", "dynamic_batching max_queue_delay_microseconds values to try (default 0,500,2000)", integerList(0))
    .option("--preferred-batch-sizes <list>", "dynamic_batching preferred_batch_size values to try, 'none' for unset (default none)", integerList(1, "none"))
    .option("--gpu-accelerators <list>", `GPU execution accelerators to try where the server reports a GPU (default ${GPU_ACCELERATORS.join(",")})`, acceleratorList)
    .option("--max-candidates <n>", "most configurations to measure, the starting one included (default: quick 20, brute no limit)", integer(1))
    .option("-p, --measurement-interval <ms>", "shortest measurement window (slow candidates get longer ones: about 12 executions each) and the warm-up length (default 2000, quick 1000)", integer(100))
    .option("-s, --stability-percentage <pct>", "largest spread (max/min - 1, %) of throughput and latency over the last 3 windows", positiveNumber, 10)
    .option("-r, --max-trials <n>", "most measurement windows per candidate (default: 10, quick 6)", integer(3))
    .option("--ab-rounds <n>", `alternating A/B rounds re-measuring the pick against the starting config at the same concurrency (at least 3; fewer than ${MEANINGFUL_AB_ROUNDS} cannot tell a real difference from chance); the pick is kept only if it is faster in every round`, integer(3), MEANINGFUL_AB_ROUNDS)
    .option("--shape <name:dims>", "shape of an input with variable dimensions, batch dimension excluded; repeatable", shape)
    .addOption(new Option("--input-data <kind>", "request data").choices(["random", "zero"]).default("random"))
    .option("--out <dir>", "where config.pbtxt, candidates.csv and the report go (default ./inference-tune-<model>)")
    .option("-v, --verbose", "print every measurement window", false)
    .addHelpText("after", `\nExit status: 0 when config.pbtxt holds a configuration confirmed faster than the starting one, ${KEPT_START_EXIT_CODE} when it keeps the starting configuration (it measured best, or the pick made no measurable difference side by side), 1 on an error or when nothing met the constraints.`);
}

/** Parses argv (without node and the script). Throws commander's errors for bad or inconsistent flags. */
export function parseTuneOptions(argv: readonly string[], command = buildTuneCommand()): TuneOptions {
  command.exitOverride().parse([...argv], { from: "user" });
  const o = command.opts();
  const { quick, modelName } = o;
  const intervalMs = o.measurementInterval ?? (quick ? 1000 : 2000);
  return {
    modelName,
    modelRepository: path.resolve(o.modelRepository),
    constraints: { latencyBudgetMs: o.latencyBudgetMs, minThroughput: o.minThroughput },
    protocol: o.protocol,
    concurrencyRange: o.concurrencyRange,
    maxConcurrency: o.maxConcurrency,
    mode: quick ? "quick" : "brute",
    lists: {
      instanceCounts: o.instanceCounts,
      intraOpThreads: o.intraOpThreads,
      maxBatchSizes: o.maxBatchSizes,
      queueDelaysUs: o.queueDelaysUs,
      preferredBatchSizes: o.preferredBatchSizes,
      gpuAccelerators: o.gpuAccelerators,
    },
    maxCandidates: o.maxCandidates ?? (quick ? 20 : Number.MAX_SAFE_INTEGER),
    measurement: {
      measurementIntervalMs: intervalMs,
      maxWindowMs: intervalMs * 4,
      stabilityPercentage: o.stabilityPercentage,
      maxTrials: o.maxTrials ?? (quick ? 6 : 10),
    },
    abRounds: o.abRounds,
    shapes: o.shape ?? new Map(),
    inputData: o.inputData,
    outDir: path.resolve(o.out ?? `inference-tune-${modelName}`),
    verbose: o.verbose,
  };
}
