import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { decodeOnnxModel, type OnnxModel } from "./onnx-model";

/** The model to optimize, read from a `.onnx` file or a Triton model directory. */
export interface ModelSource {
  /** The model's name: the config's `name`, else the directory's or file's base name. */
  readonly name: string;
  readonly model: OnnxModel;
  readonly onnxPath: string;
  /** The source config.pbtxt; undefined for a bare `.onnx` file. */
  readonly configText: string | undefined;
  /** Other files of the model directory (labels, ...), copied beside the variant's config. */
  readonly extraFiles: readonly string[];
}

async function latestVersionDir(dir: string): Promise<string> {
  const versions = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && /^[1-9][0-9]*$/.test(e.name)).map((e) => Number(e.name)).sort((a, b) => b - a);
  if (versions.length === 0) throw new Error(`${dir}: no version folder (1/, 2/, ...)`);
  return path.join(dir, String(versions[0]));
}

export async function readModelSource(location: string): Promise<ModelSource> {
  if (!(await stat(location)).isDirectory()) {
    return {
      name: path.basename(location, path.extname(location)).replace(/[^\w-]/g, "_"),
      model: decodeOnnxModel(await readFile(location)), onnxPath: location, configText: undefined, extraFiles: [],
    };
  }
  const configPath = path.join(location, "config.pbtxt");
  const configText = existsSync(configPath) ? await readFile(configPath, "utf8") : undefined;
  const fileName = /default_model_filename\s*:\s*"([^"]+)"/.exec(configText ?? "")?.[1] ?? "model.onnx";
  const onnxPath = path.join(await latestVersionDir(location), fileName);
  const name = /^\s*name\s*:\s*"([^"]+)"/m.exec(configText ?? "")?.[1] ?? path.basename(path.resolve(location));
  const extraFiles = (await readdir(location, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name !== "config.pbtxt").map((e) => path.join(location, e.name));
  return { name, model: decodeOnnxModel(await readFile(onnxPath)), onnxPath, configText, extraFiles };
}
