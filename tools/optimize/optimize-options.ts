import path from "node:path";
import { Command, InvalidArgumentError, Option } from "@commander-js/extra-typings";
import { IMAGE_PREPROCESSES, type ImagePreprocess } from "./calibration-data";
import type { CalibrationMethod } from "./calibrate";
import { PRECISIONS, type Precision } from "./optimize-model";
import { OptimizeError } from "./optimize-error";
import type { QuantType } from "./quant-math";

/** Everything `inference-optimize` was asked to do, validated. */
export interface OptimizeOptions {
  readonly model: string;
  readonly name: string | undefined;
  readonly precisions: readonly Precision[];
  readonly outDir: string;
  readonly keepIoTypes: boolean;
  readonly calibrationData: string | undefined;
  readonly validationData: string | undefined;
  /** A labels file for the validation data (`<file name> <class index>` per line): accuracy against ground truth. */
  readonly labels: string | undefined;
  readonly maxSamples: number;
  readonly preprocess: ImagePreprocess;
  readonly calibrateMethod: CalibrationMethod;
  readonly percentile: number;
  /** Histogram bins for Percentile/Entropy; undefined: ONNX Runtime's default for the method. */
  readonly histogramBins: number | undefined;
  readonly activationType: QuantType;
  readonly perChannel: boolean;
  /** fp16: operators kept in FP32 instead of the default block list. */
  readonly opBlockList: readonly string[] | undefined;
  /** int8: nodes (by name) left in float. */
  readonly nodesToExclude: readonly string[];
  readonly speed: boolean;
  readonly concurrencies: readonly number[];
  readonly rounds: number;
  readonly warmupMs: number;
  readonly measurementMs: number;
  readonly reportDir: string;
}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`'${value}' is not an integer >= 1`);
  return n;
}

function names(value: string): string[] {
  return value.split(",").map((part) => part.trim()).filter((part) => part !== "");
}

function precisionList(value: string): Precision[] {
  return value.split(",").map((part) => {
    const name = part.trim();
    if (!(PRECISIONS as readonly string[]).includes(name)) throw new InvalidArgumentError(`'${name}' is not one of ${PRECISIONS.join(", ")}`);
    return name as Precision;
  });
}

function percentileValue(value: string): number {
  const n = Number(value);
  if (!(n > 50 && n <= 100)) throw new InvalidArgumentError(`'${value}' is not a percentile in (50, 100]`);
  return n;
}

/** The commander program: flags, their types and defaults, and the help text. */
export function buildOptimizeCommand() {
  return new Command("inference-optimize")
    .description("Make FP16 and INT8 (QDQ) variants of an FP32 ONNX model as Triton model directories, and measure their accuracy and served speed against it")
    .requiredOption("--model <path>", "an ONNX model file, or a Triton model directory (config.pbtxt + version folder)")
    .addOption(new Option("--precision <list>", `variants to make, comma-separated: ${PRECISIONS.join(", ")}`).argParser(precisionList).makeOptionMandatory())
    .requiredOption("--out <dir>", "model repository to write the variants into (<name>_<precision>/), never the input's")
    .option("--name <name>", "model name (default: the config's name, or the file's base name)")
    .option("--keep-io-types", "fp16: keep FP32 inputs and outputs (Cast at the edges) instead of FP16 I/O", false)
    .option("--calibration-data <dir>", "images or tensor files (.pb TensorProto, .raw float32) for INT8 calibration")
    .option("--validation-data <dir>", "images or tensor files the accuracy is measured on (default: the calibration data)")
    .option("--labels <file>", "ground truth for the validation data: one '<file name> <class index>' per line")
    .option("--max-samples <n>", "use at most this many files of each data folder", positiveInteger, 200)
    .addOption(new Option("--preprocess <kind>", "how images become input tensors").choices(IMAGE_PREPROCESSES).default("unit"))
    .addOption(new Option("--calibrate-method <method>", "activation ranges from").choices(["minmax", "percentile", "entropy"] as const).default("minmax"))
    .option("--percentile <p>", "percentile method: share of values kept, in percent", percentileValue, 99.999)
    .option("--histogram-bins <n>", "percentile and entropy methods: histogram bins (default: ONNX Runtime's, 2048 and 128)", positiveInteger)
    .addOption(new Option("--activation-type <type>", "int8: activation type").choices(["uint8", "int8"] as const).default("uint8"))
    .option("--no-per-channel", "int8: one weight scale per tensor instead of per output channel")
    .option("--op-block-list <ops>", "fp16: operators kept in FP32, comma-separated (default: onnxconverter-common's DEFAULT_OP_BLOCK_LIST)", names)
    .option("--nodes-to-exclude <names>", "int8: node names left in float, comma-separated", names, [])
    .option("--no-speed", "skip the served A/B speed measurement")
    .option("--concurrency <list>", "concurrencies the served A/B runs at, comma-separated",
      (value: string) => value.split(",").map((v) => positiveInteger(v.trim())), [1, 2])
    .option("--rounds <n>", "A/B rounds per concurrency", positiveInteger, 3)
    .option("--warmup-ms <ms>", "warm-up before each measurement", positiveInteger, 1000)
    .option("--measurement-ms <ms>", "length of each measurement", positiveInteger, 3000)
    .option("--report-dir <dir>", "where the HTML report and chart go", "inference-optimize-report");
}

/** Parses argv (without node and script); throws commander's error for bad flags and --help. */
export function parseOptimizeOptions(argv: readonly string[], command = buildOptimizeCommand()): OptimizeOptions {
  command.exitOverride().parse([...argv], { from: "user" });
  const o = command.opts();
  if (o.precision.includes("int8") && o.calibrationData === undefined) {
    throw new OptimizeError("--precision int8 needs --calibration-data (images or tensors the activation ranges come from)");
  }
  return {
    model: o.model, name: o.name, precisions: [...new Set(o.precision)], outDir: path.resolve(o.out), keepIoTypes: o.keepIoTypes,
    calibrationData: o.calibrationData, validationData: o.validationData ?? o.calibrationData, labels: o.labels, maxSamples: o.maxSamples,
    preprocess: o.preprocess, calibrateMethod: o.calibrateMethod, percentile: o.percentile, histogramBins: o.histogramBins, activationType: o.activationType,
    perChannel: o.perChannel, opBlockList: o.opBlockList, nodesToExclude: o.nodesToExclude, speed: o.speed, concurrencies: o.concurrency, rounds: o.rounds, warmupMs: o.warmupMs,
    measurementMs: o.measurementMs, reportDir: path.resolve(o.reportDir),
  };
}
