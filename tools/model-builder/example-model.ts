import { renderModelConfigText, type ModelConfigSpec } from "./model-config-text";

/** A file of a model directory, by its path relative to `<repository>/<model name>/`. */
export interface ExampleModelFile {
  readonly relativePath: string;
  readonly contents: Uint8Array | string;
}

/** One Triton model directory of the example repository, held in memory until it is written. */
export interface ExampleModel {
  readonly name: string;
  readonly files: readonly ExampleModelFile[];
}

/** The version every example model ships as (`<model>/1/`). */
export const EXAMPLE_MODEL_VERSION = "1";

/** Triton's default model file name for `platform: "onnxruntime_onnx"`. */
export const ONNX_MODEL_FILE_NAME = "model.onnx";

/**
 * A model directory laid out as Triton expects: `config.pbtxt`, the version directory
 * {@link EXAMPLE_MODEL_VERSION} with `versionFiles` (file name -> contents), and extra files such as labels.
 */
export function exampleModel(
  config: ModelConfigSpec,
  versionFiles: Readonly<Record<string, Uint8Array | string>>,
  extraFiles: readonly ExampleModelFile[] = [],
): ExampleModel {
  return {
    name: config.name,
    files: [
      { relativePath: "config.pbtxt", contents: renderModelConfigText(config) },
      ...Object.entries(versionFiles).map(([fileName, contents]) => ({
        relativePath: `${EXAMPLE_MODEL_VERSION}/${fileName}`,
        contents,
      })),
      ...extraFiles,
    ],
  };
}
