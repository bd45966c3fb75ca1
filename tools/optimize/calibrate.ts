import * as ort from "onnxruntime-node";
import { cloneOnnxModel, DATA_TYPE, encodeOnnxModel, type OnnxModel } from "./onnx-model";
import type { ActivationRange } from "./qdq-quantizer";
import { EntropyHistogram } from "./entropy-histogram";
import { HistogramCollector } from "./histogram";

/**
 * How calibrated ranges are computed from the activations seen (onnxruntime/python/tools/quantization/calibrate.py):
 * MinMax takes the extremes over all samples; Percentile the range holding `percentile` % of the absolute values'
 * histogram; Entropy the symmetric window of least KL divergence.
 */
export type CalibrationMethod = "minmax" | "percentile" | "entropy";

export interface CalibrationOptions {
  readonly method: CalibrationMethod;
  /** Percentile method: the share of values kept, in percent (ONNX Runtime's default 99.999). */
  readonly percentile?: number;
  /** Histogram bins (ONNX Runtime's defaults: 2048 for Percentile, 128 for Entropy). */
  readonly bins?: number;
  /** Entropy method: bins of the quantized distribution (ONNX Runtime's default 128). */
  readonly quantizedBins?: number;
}

/** One calibration input: the model's inputs by name. */
export type CalibrationSample = Readonly<Record<string, ort.Tensor>>;

/** The model with every tensor to calibrate also a graph output, so that one run returns them all. */
function augmentedModel(model: OnnxModel, tensors: readonly string[]): Uint8Array {
  const augmented = cloneOnnxModel(model);
  const outputs = new Set(augmented.graph.output.map((output) => output.name));
  for (const name of tensors) {
    if (!outputs.has(name)) augmented.graph.output.push({ name, type: { tensor_type: { elem_type: DATA_TYPE.FLOAT } } });
  }
  return encodeOnnxModel(augmented);
}

/**
 * Runs the FP32 model on each sample with ONNX Runtime and returns the calibrated range of each tensor. Samples
 * are run one at a time, so that only one sample's activations are held at once.
 */
export async function calibrateRanges(
  model: OnnxModel, tensors: readonly string[], samples: Iterable<CalibrationSample> | AsyncIterable<CalibrationSample>, options: CalibrationOptions,
): Promise<Map<string, ActivationRange>> {
  const session = await ort.InferenceSession.create(augmentedModel(model, tensors), { graphOptimizationLevel: "basic" });
  const minMax = new Map<string, { min: number; max: number }>();
  const histograms = new Map<string, HistogramCollector>();
  const entropyHistograms = new Map<string, EntropyHistogram>();
  let count = 0;
  try {
    for await (const sample of samples) {
      count++;
      const results = await session.run(sample, [...tensors]);
      for (const name of tensors) {
        const data = results[name]?.data;
        if (!(data instanceof Float32Array)) throw new Error(`calibration: ${name} is not a FLOAT tensor`);
        let { min, max } = minMax.get(name) ?? { min: Infinity, max: -Infinity };
        for (let i = 0; i < data.length; i++) {
          const value = data[i]!;
          if (value < min) min = value;
          if (value > max) max = value;
        }
        minMax.set(name, { min, max });
        if (options.method === "percentile") {
          let histogram = histograms.get(name);
          if (histogram === undefined) histograms.set(name, histogram = new HistogramCollector(options.bins ?? 2048));
          histogram.collectAbsolute(data);
        } else if (options.method === "entropy") {
          let histogram = entropyHistograms.get(name);
          if (histogram === undefined) entropyHistograms.set(name, histogram = new EntropyHistogram(options.bins ?? 128, options.quantizedBins ?? 128));
          histogram.collect(data);
        }
      }
    }
  } finally {
    await session.release();
  }
  if (count === 0) throw new Error("calibration: no samples");
  if (options.method === "minmax") return new Map([...minMax].map(([name, range]) => [name, range]));
  if (options.method === "entropy") return new Map(tensors.map((name) => [name, entropyHistograms.get(name)!.entropyRange()]));
  const percentile = options.percentile ?? 99.999;
  return new Map(tensors.map((name) => [name, histograms.get(name)!.percentileRange(percentile, minMax.get(name)!)]));
}
