import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { loadOnnxSchema } from "../model-builder/index";
import { DATA_TYPE, type OnnxModel, type OnnxTensor } from "./onnx-model";
import type { CalibrationSample } from "./calibrate";
import { elementCount, floatValues } from "./tensor-data";

/**
 * How an image becomes the model's input, after resizing to its height x width (aspect ratio ignored, bilinear):
 *  - `unit`: RGB scaled to [0, 1] (the default);
 *  - `imagenet`: RGB in [0, 1], minus ImageNet mean (0.485, 0.456, 0.406), over std (0.229, 0.224, 0.225);
 *  - `caffe-bgr`: BGR 0-255 unnormalized, as Caffe2 models such as the ONNX zoo's SqueezeNet 1.1 want;
 *  - `caffe-bgr-mean`: BGR 0-255 minus the Caffe means (103.939, 116.779, 123.68).
 */
export type ImagePreprocess = "unit" | "imagenet" | "caffe-bgr" | "caffe-bgr-mean";
export const IMAGE_PREPROCESSES: readonly ImagePreprocess[] = ["unit", "imagenet", "caffe-bgr", "caffe-bgr-mean"];

const IMAGE_EXTENSIONS = new Set([".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff"]);
const TENSOR_EXTENSIONS = new Set([".pb", ".raw", ".bin"]);

/** A model input as the data loader needs it: name, FLOAT/FLOAT16, and fixed dims (symbolic batch read as 1). */
export interface ModelInputSpec {
  readonly name: string;
  readonly elemType: number;
  readonly dims: readonly number[];
}

export function modelInputs(model: OnnxModel): ModelInputSpec[] {
  const initializers = new Set(model.graph.initializer.map((t) => t.name));
  return model.graph.input.filter((input) => !initializers.has(input.name)).map((input) => ({
    name: input.name,
    elemType: input.type?.tensor_type?.elem_type ?? DATA_TYPE.FLOAT,
    dims: (input.type?.tensor_type?.shape?.dim ?? []).map((dim) => (dim.dim_value !== undefined && dim.dim_value > 0 ? dim.dim_value : 1)),
  }));
}

/** NCHW when the channel axis (3 or 1 channels) is second, NHWC when it is last. */
function imageLayout(dims: readonly number[]): { layout: "NCHW" | "NHWC"; channels: number; height: number; width: number } {
  if (dims.length !== 4) throw new Error(`an image input needs 4 dimensions, not [${dims.join(",")}]`);
  const [, d1, d2, d3] = dims as [number, number, number, number];
  if (d1 === 3 || d1 === 1) return { layout: "NCHW", channels: d1, height: d2, width: d3 };
  if (d3 === 3 || d3 === 1) return { layout: "NHWC", channels: d3, height: d1, width: d2 };
  throw new Error(`cannot tell the channel axis of [${dims.join(",")}]`);
}

/** An image file as a float32 tensor of the input's shape (batch 1). */
export async function imageTensor(file: string, input: ModelInputSpec, preprocess: ImagePreprocess): Promise<Float32Array> {
  const { layout, channels, height, width } = imageLayout(input.dims);
  const { data } = await sharp(file).removeAlpha().toColourspace("srgb")
    .resize(width, height, { fit: "fill", kernel: "linear" }).raw().toBuffer({ resolveWithObject: true });
  const out = new Float32Array(channels * height * width);
  const bgr = preprocess === "caffe-bgr" || preprocess === "caffe-bgr-mean";
  const mean = preprocess === "imagenet" ? [0.485, 0.456, 0.406] : preprocess === "caffe-bgr-mean" ? [103.939, 116.779, 123.68] : [0, 0, 0];
  const std = preprocess === "imagenet" ? [0.229, 0.224, 0.225] : [1, 1, 1];
  const scale = bgr ? 1 : 1 / 255;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        // Grey models read the first channel; BGR swaps the source channel order.
        const source = channels === 1 ? 0 : bgr ? 2 - c : c;
        const value = (data[(y * width + x) * 3 + source]! * scale - mean[c]!) / std[c]!;
        const index = layout === "NCHW" ? c * height * width + y * width + x : (y * width + x) * channels + c;
        out[index] = value;
      }
    }
  }
  return out;
}

/** A serialized ONNX TensorProto (.pb, as in ONNX test data sets) or raw little-endian float32 (.raw, .bin). */
export async function tensorFile(file: string, input: ModelInputSpec): Promise<Float32Array> {
  const bytes = await readFile(file);
  let values: Float32Array;
  if (path.extname(file) === ".pb") {
    const TensorProto = loadOnnxSchema().ModelProto.root.lookupType("onnx.TensorProto");
    values = floatValues(TensorProto.toObject(TensorProto.decode(bytes), { longs: Number, arrays: true }) as OnnxTensor);
  } else {
    values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  if (values.length !== elementCount(input.dims)) throw new Error(`${file}: ${values.length} values, input ${input.name} needs ${elementCount(input.dims)}`);
  return values;
}

/** The data files of a folder (images and tensors), sorted by name so that runs are repeatable. */
export async function dataFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isFile() && (IMAGE_EXTENSIONS.has(path.extname(e.name).toLowerCase()) || TENSOR_EXTENSIONS.has(path.extname(e.name).toLowerCase())))
    .map((e) => path.join(dir, e.name)).sort();
}

export interface DataSample {
  /** The file it came from. */
  readonly file: string;
  readonly values: Float32Array;
}

/** Loads each file of `dir` as an input of the model's single input. Throws when the model has several inputs. */
export async function loadSamples(dir: string, model: OnnxModel, preprocess: ImagePreprocess, limit?: number): Promise<DataSample[]> {
  const inputs = modelInputs(model);
  if (inputs.length !== 1) throw new Error(`calibration data folders feed models with one input; this one has ${inputs.length}`);
  const input = inputs[0]!;
  const files = (await dataFiles(dir)).slice(0, limit);
  if (files.length === 0) throw new Error(`${dir}: no images (.jpg, .png, ...) or tensors (.pb, .raw)`);
  const samples: DataSample[] = [];
  for (const file of files) {
    const values = TENSOR_EXTENSIONS.has(path.extname(file).toLowerCase()) ? await tensorFile(file, input) : await imageTensor(file, input, preprocess);
    samples.push({ file, values });
  }
  return samples;
}

/** A sample as the feeds of an FP32 model (FLOAT input). */
export function sampleFeeds(sample: DataSample, input: ModelInputSpec): CalibrationSample {
  return { [input.name]: new ort.Tensor("float32", sample.values, [...input.dims]) };
}
