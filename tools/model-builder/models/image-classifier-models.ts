import fs from "node:fs";
import path from "node:path";
import { compileTypeScriptModel } from "../compile-typescript-model";
import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
import { withVariableBatchDimension } from "../variable-batch-dimension";

const MAX_BATCH_SIZE = 8;
const IMAGE_DIMS = [3, 224, 224];
const CLASS_DIMS = [1000, 1, 1];
const LABELS_FILE = "labels.txt";
/** The TypeScript backend's default file name for a version folder. */
const TYPESCRIPT_MODEL_FILE_NAME = "model.js";

/** The real model and labels this pipeline needs, under the shared data folder (see its README). */
export function imageClassifierSources(sharedDataDir: string): { readonly model: string; readonly labels: string } {
  return {
    model: path.join(sharedDataDir, "models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx"),
    labels: path.join(sharedDataDir, "labels", "densenet_labels.txt"),
  };
}

/** Where the example TypeScript models' sources are, relative to the package root. */
const TYPESCRIPT_MODELS_DIR = path.join("tools", "model-builder", "typescript-models");

/**
 * `image_classifier`, an ensemble that takes encoded images and answers ImageNet classes, and its three steps:
 * `image_preprocess` (TypeScript: JPEG/PNG bytes -> FP16 NCHW), `squeezenet` (the real SqueezeNet 1.1 FP16 from
 * the shared data folder, its batch dimension made variable so it batches) and `image_postprocess` (TypeScript:
 * probabilities -> top-k "score:index:label", `k` a request parameter); and `image_classifier_bls`, the same
 * pipeline as a TypeScript model calling the three (BLS), with a second crop for images it is unsure of. The
 * TypeScript sources are compiled to model.js here; the ONNX model and labels are copied, never committed.
 */
export function buildImageClassifierModels(packageRoot: string, sharedDataDir: string): ExampleModel[] {
  const sources = imageClassifierSources(sharedDataDir);
  const compiled = (name: string): string => compileTypeScriptModel(path.join(packageRoot, TYPESCRIPT_MODELS_DIR, `${name}.ts`));
  const labels = fs.readFileSync(sources.labels);
  const batching = { maxBatchSize: MAX_BATCH_SIZE, dynamicBatching: {} } as const;
  const oneInstance = [{ count: 1, kind: "KIND_CPU" }] as const;
  // Two decoders: while one waits for its batch's slowest image, the other takes the next batch.
  const twoInstances = [{ count: 2, kind: "KIND_CPU" }] as const;
  return [
    exampleModel({
      name: "image_preprocess", runtime: { backend: "typescript" }, ...batching, instanceGroups: twoInstances,
      inputs: [{ name: "IMAGE", dataType: "TYPE_STRING", dims: [1] }],
      outputs: [{ name: "IMAGE_TENSOR", dataType: "TYPE_FP16", dims: IMAGE_DIMS }],
      parameters: { max_input_pixels: "40000000" },
    }, { [TYPESCRIPT_MODEL_FILE_NAME]: compiled("image-preprocess") }),
    exampleModel({
      name: "squeezenet", runtime: { platform: "onnxruntime_onnx" }, ...batching,
      inputs: [{ name: "data_0", dataType: "TYPE_FP16", format: "FORMAT_NCHW", dims: IMAGE_DIMS }],
      outputs: [{ name: "softmaxout_1", dataType: "TYPE_FP16", dims: CLASS_DIMS, labelFilename: LABELS_FILE }],
    }, { [ONNX_MODEL_FILE_NAME]: withVariableBatchDimension(fs.readFileSync(sources.model)) }, [{ relativePath: LABELS_FILE, contents: labels }]),
    exampleModel({
      name: "image_postprocess", runtime: { backend: "typescript" }, ...batching, instanceGroups: oneInstance,
      inputs: [{ name: "PROBABILITIES", dataType: "TYPE_FP16", dims: CLASS_DIMS }],
      outputs: [{ name: "CLASSES", dataType: "TYPE_STRING", dims: [-1] }],
      parameters: { label_filename: LABELS_FILE },
    }, { [TYPESCRIPT_MODEL_FILE_NAME]: compiled("image-postprocess") }, [{ relativePath: LABELS_FILE, contents: labels }]),
    exampleModel({
      name: "image_classifier", runtime: { platform: "ensemble" }, maxBatchSize: MAX_BATCH_SIZE,
      inputs: [{ name: "IMAGE", dataType: "TYPE_STRING", dims: [1] }],
      outputs: [{ name: "CLASSES", dataType: "TYPE_STRING", dims: [-1] }],
      ensembleSteps: [
        { modelName: "image_preprocess", inputMap: { IMAGE: "IMAGE" }, outputMap: { IMAGE_TENSOR: "image_tensor" } },
        { modelName: "squeezenet", inputMap: { data_0: "image_tensor" }, outputMap: { softmaxout_1: "probabilities" } },
        { modelName: "image_postprocess", inputMap: { PROBABILITIES: "probabilities" }, outputMap: { CLASSES: "CLASSES" } },
      ],
    }, { ".keep": "" }),
    // Its instances mostly wait on their calls: several let a new batch start while earlier ones wait.
    exampleModel({
      name: "image_classifier_bls", runtime: { backend: "typescript" }, ...batching, instanceGroups: [{ count: 4, kind: "KIND_CPU" }],
      inputs: [{ name: "IMAGE", dataType: "TYPE_STRING", dims: [1] }],
      outputs: [{ name: "CLASSES", dataType: "TYPE_STRING", dims: [-1] }, { name: "PASSES", dataType: "TYPE_INT32", dims: [1] }],
    }, { [TYPESCRIPT_MODEL_FILE_NAME]: compiled("image-classifier-bls") }),
  ];
}
