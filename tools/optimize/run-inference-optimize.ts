import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { compareOutputs, firstOutputs, parseLabels, type AccuracySummary } from "./accuracy";
import { loadSamples, modelInputs, sampleFeeds, type DataSample } from "./calibration-data";
import { readModelSource } from "./model-source";
import type { OnnxModel } from "./onnx-model";
import { OptimizeError } from "./optimize-error";
import { float16Variant, int8DynamicVariant, int8Variant, prepareFloat32, type Precision } from "./optimize-model";
import type { OptimizeOptions } from "./optimize-options";
import { reportTable, type VariantResult, writeOptimizeReport } from "./optimize-report";
import { measureServedSpeed, type ServedModel } from "./served-speed";
import { writeVariant, type WrittenVariant } from "./write-variant";

export interface OptimizeOutput {
  readonly variants: readonly (WrittenVariant & { readonly precision: Precision })[];
  readonly results: readonly VariantResult[];
  readonly reportHtml: string | undefined;
}

export interface OptimizeStreams {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

async function makeVariant(precision: Precision, fp32: OnnxModel, options: OptimizeOptions, calibration: readonly DataSample[]): Promise<OnnxModel> {
  switch (precision) {
    case "fp16": return float16Variant(fp32, options.keepIoTypes, options.opBlockList);
    case "int8-dynamic": return int8DynamicVariant(fp32);
    case "int8": {
      const input = modelInputs(fp32)[0]!;
      return int8Variant(fp32, {
        calibration: { method: options.calibrateMethod, percentile: options.percentile, bins: options.histogramBins },
        samples: () => calibration.map((sample) => sampleFeeds(sample, input)),
        activationType: options.activationType,
        perChannel: options.perChannel,
        nodesToExclude: options.nodesToExclude,
      });
    }
  }
}

/**
 * The whole tool: read the model, prepare its FP32 form, write each variant as a Triton model directory, then
 * measure each against FP32 (accuracy in-process with ONNX Runtime, speed served by this package's server) and
 * report. The input is only read.
 */
export async function runInferenceOptimize(options: OptimizeOptions, streams: OptimizeStreams): Promise<OptimizeOutput> {
  const log = (line: string): void => { streams.stderr.write(`${line}\n`); };
  const modelPath = path.resolve(options.model);
  if (!existsSync(modelPath)) throw new OptimizeError(`${options.model}: no such file or directory`);
  const source = await readModelSource(modelPath);
  if (isInside(path.dirname(source.onnxPath), options.outDir) || isInside(options.outDir, path.dirname(source.onnxPath))) {
    throw new OptimizeError(`--out ${options.outDir} overlaps the input model's folder; write the variants elsewhere`);
  }
  const name = options.name ?? source.name;
  const fp32 = prepareFloat32(source.model);
  const calibration = options.calibrationData === undefined ? [] : await loadSamples(options.calibrationData, fp32, options.preprocess, options.maxSamples);
  const validation = options.validationData === undefined ? [] : options.validationData === options.calibrationData
    ? calibration : await loadSamples(options.validationData, fp32, options.preprocess, options.maxSamples);
  const reference = validation.length > 0 ? await firstOutputs(fp32, validation) : [];
  const labels = options.labels === undefined ? new Map<string, number>() : parseLabels(await readFile(options.labels, "utf8"));

  const variants: (WrittenVariant & { precision: Precision; model: OnnxModel })[] = [];
  for (const precision of options.precisions) {
    log(`inference-optimize: ${name} -> ${precision}`);
    const model = await makeVariant(precision, fp32, options, calibration);
    const gpu = precision === "fp16" ? "FP16" : precision === "int8" ? "INT8" : undefined;
    const written = await writeVariant(options.outDir, `${name}_${precision.replace("-", "_")}`, source, model, gpu);
    variants.push({ ...written, precision, model });
    log(`  wrote ${written.directory}`);
  }

  const accuracyOf = async (model: OnnxModel): Promise<AccuracySummary | undefined> =>
    validation.length === 0 ? undefined : compareOutputs(reference, await firstOutputs(model, validation), validation.map((s) => path.basename(s.file)), labels);

  const results: VariantResult[] = [];
  const baselineRepository = options.speed ? await mkdtemp(path.join(os.tmpdir(), "inference-optimize-fp32-")) : undefined;
  try {
    const baselineWritten = baselineRepository === undefined ? undefined : await writeVariant(baselineRepository, `${name}_fp32`, source, fp32, undefined);
    for (const variant of variants) {
      const accuracy = await accuracyOf(variant.model);
      let speed;
      if (baselineWritten !== undefined) {
        const sample = validation[0] ?? { file: "zeros", values: new Float32Array(modelInputs(fp32)[0]!.dims.reduce((a, b) => a * b, 1)) };
        const served = (written: WrittenVariant, model: OnnxModel, label: string): ServedModel =>
          ({ label, directory: written.directory, name: written.name, configText: written.configText, input: modelInputs(model)[0]! });
        log(`  served A/B: ${variant.name} vs ${baselineWritten.name}`);
        speed = await measureServedSpeed(served(variant, variant.model, variant.precision), served(baselineWritten, fp32, "fp32"), sample, {
          concurrencies: options.concurrencies, rounds: options.rounds, warmupMs: options.warmupMs, durationMs: options.measurementMs,
        }, log);
      }
      results.push({ label: variant.precision, directory: variant.directory, accuracy, speed });
    }
  } finally {
    if (baselineRepository !== undefined) await rm(baselineRepository, { recursive: true, force: true });
  }

  streams.stdout.write(`${reportTable(results)}\n`);
  let reportHtml: string | undefined;
  if (options.speed || validation.length > 0) {
    reportHtml = await writeOptimizeReport(options.reportDir, name, [
      `model: ${modelPath}`, `variants: ${options.outDir}`,
      `validation: ${validation.length} samples from ${options.validationData ?? "-"} (preprocess ${options.preprocess})`,
      `calibration: ${calibration.length} samples, ${options.calibrateMethod}; activations ${options.activationType}, weights INT8 ${options.perChannel ? "per channel" : "per tensor"}`,
      `served A/B: concurrency ${options.concurrencies.join(",")}, ${options.rounds} rounds of ${options.measurementMs} ms`,
    ], results);
    streams.stdout.write(`report: ${reportHtml}\n`);
  }
  return { variants: variants.map(({ model: _model, ...rest }) => rest), results, reportHtml };
}
