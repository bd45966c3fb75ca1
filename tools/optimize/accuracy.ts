import * as ort from "onnxruntime-node";
import { fromFloat16Array, toFloat16Array } from "../../protocol/float16";
import { modelInputs, type DataSample } from "./calibration-data";
import { DATA_TYPE, encodeOnnxModel, type OnnxModel } from "./onnx-model";

/** How far a variant's first output is from the FP32 model's, over the validation samples. */
export interface AccuracySummary {
  readonly samples: number;
  /** Share of samples whose top-1 class (argmax of the first output) is the FP32 model's. */
  readonly top1Agreement: number;
  /** Share of samples whose FP32 top-1 class is among the variant's top 5. */
  readonly top5Agreement: number;
  readonly maxAbsDiff: number;
  readonly meanAbsDiff: number;
  /** Against ground truth, where `--labels` names the class of some samples: top-1 accuracy of each model. */
  readonly labelled?: { readonly samples: number; readonly referenceTop1: number; readonly variantTop1: number };
  /** Per sample: the file and the two top-1 classes. */
  readonly perSample: readonly { readonly file: string; readonly referenceTop1: number; readonly variantTop1: number }[];
}

function topK(values: Float32Array, k: number): number[] {
  return [...values.keys()].sort((a, b) => values[b]! - values[a]!).slice(0, k);
}

/** Runs a model on samples one by one, feeding FLOAT or FLOAT16 as its input needs; returns the first output as float32. */
export async function firstOutputs(model: OnnxModel, samples: readonly DataSample[]): Promise<Float32Array[]> {
  const input = modelInputs(model)[0]!;
  const session = await ort.InferenceSession.create(encodeOnnxModel(model));
  try {
    const outputs: Float32Array[] = [];
    for (const sample of samples) {
      const tensor = input.elemType === DATA_TYPE.FLOAT16
        ? new ort.Tensor("float16", toFloat16Array(sample.values), [...input.dims])
        : new ort.Tensor("float32", sample.values, [...input.dims]);
      const result = await session.run({ [input.name]: tensor });
      const data = result[session.outputNames[0]!]!.data;
      outputs.push(data instanceof Uint16Array ? fromFloat16Array(data) : Float32Array.from(data as Float32Array));
    }
    return outputs;
  } finally {
    await session.release();
  }
}

/**
 * Reads a labels file: one `<file name> <class index>` per line (blank lines and `#` comments skipped), the file
 * name as in the validation folder.
 */
export function parseLabels(text: string): Map<string, number> {
  const labels = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const match = /^(.+?)\s+(\d+)$/.exec(line);
    if (match === null) throw new Error(`labels line ${index + 1}: expected '<file name> <class index>', got '${line}'`);
    labels.set(match[1]!, Number(match[2]));
  });
  return labels;
}

/** Compares the variant's outputs with the reference's, sample by sample, and with the labels where there are any. */
export function compareOutputs(
  reference: readonly Float32Array[], variant: readonly Float32Array[], files: readonly string[], labels: ReadonlyMap<string, number> = new Map(),
): AccuracySummary {
  let top1 = 0;
  let top5 = 0;
  let maxAbsDiff = 0;
  let sum = 0;
  let count = 0;
  const perSample = reference.map((ref, index) => {
    const out = variant[index]!;
    for (let i = 0; i < ref.length; i++) {
      const diff = Math.abs(ref[i]! - out[i]!);
      if (diff > maxAbsDiff) maxAbsDiff = diff;
      sum += diff;
      count++;
    }
    const referenceTop1 = topK(ref, 1)[0]!;
    const variantTop5 = topK(out, 5);
    if (variantTop5[0] === referenceTop1) top1++;
    if (variantTop5.includes(referenceTop1)) top5++;
    return { file: files[index] ?? "", referenceTop1, variantTop1: variantTop5[0]! };
  });
  const withLabel = perSample.filter((sample) => labels.has(sample.file));
  const correct = (pick: (sample: (typeof perSample)[number]) => number): number =>
    withLabel.filter((sample) => pick(sample) === labels.get(sample.file)).length / withLabel.length;
  return {
    samples: reference.length, top1Agreement: top1 / reference.length, top5Agreement: top5 / reference.length,
    maxAbsDiff, meanAbsDiff: count === 0 ? 0 : sum / count, perSample,
    ...(withLabel.length === 0 ? {} : { labelled: { samples: withLabel.length, referenceTop1: correct((s) => s.referenceTop1), variantTop1: correct((s) => s.variantTop1) } }),
  };
}
