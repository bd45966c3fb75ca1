import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { editModelConfig, gpuAlternativeConfig, modelConfigFor } from "./model-config-edit";
import type { ModelSource } from "./model-source";
import { encodeOnnxModel, type OnnxModel } from "./onnx-model";

/** What was written for one variant. */
export interface WrittenVariant {
  readonly name: string;
  readonly directory: string;
  readonly configText: string;
}

/** The source's own config, or one made for the bare file, renamed and retyped for `model`. */
export function variantConfig(source: ModelSource, name: string, model: OnnxModel): string {
  return editModelConfig(source.configText ?? modelConfigFor(source.name, source.model), name, model);
}

/**
 * Writes `<repository>/<name>/`: config.pbtxt (the source's batching and instance settings, the variant's tensor
 * types), `1/model.onnx`, the source's other files (labels), and, for the T4 pools, `configs/t4.pbtxt` with the
 * TensorRT settings for the variant's precision.
 */
export async function writeVariant(
  repository: string, name: string, source: ModelSource, model: OnnxModel, gpuPrecision: "FP16" | "INT8" | undefined,
): Promise<WrittenVariant> {
  const directory = path.join(repository, name);
  await mkdir(path.join(directory, "1"), { recursive: true });
  const configText = variantConfig(source, name, model);
  await writeFile(path.join(directory, "config.pbtxt"), configText);
  await writeFile(path.join(directory, "1", "model.onnx"), encodeOnnxModel(model));
  for (const file of source.extraFiles) await copyFile(file, path.join(directory, path.basename(file)));
  if (gpuPrecision !== undefined) {
    await mkdir(path.join(directory, "configs"), { recursive: true });
    await writeFile(path.join(directory, "configs", "t4.pbtxt"), gpuAlternativeConfig(configText, gpuPrecision));
  }
  return { name, directory, configText };
}
