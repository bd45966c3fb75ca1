import fs from "node:fs";
import path from "node:path";
import { STAMP_FILE_NAME } from "../../common/example-repository-stamp";
import { toGpuModelConfig } from "./gpu-model-config";

/** One object of the model repository bucket. */
export interface ModelRepositoryFile {
  /** Object name: the path inside the repository with `/` separators, e.g. `mlp/1/model.onnx`. */
  readonly objectName: string;
  /** The local file, uploaded as is, unless `content` is set. */
  readonly localPath: string;
  /** Replacement text for model configs (KIND_GPU); undefined for every other file. */
  readonly content?: string;
}

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true })
    // Hidden folders are build staging; hidden files stay, since a placeholder such as `1/.keep` is what makes an
    // otherwise empty version directory (identity-backend models) exist in the bucket.
    .filter((entry) => !(entry.isDirectory() && entry.name.startsWith(".")))
    .flatMap((entry) => (entry.isDirectory() ? walk(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
}

/** Which models of a local repository to upload, and the stack config keys that chose them (named in errors). */
export interface ModelSelection {
  /** The key that set the repository folder, e.g. `gpu-inference:modelRepository.sourceDir`. */
  readonly sourceDirKey: string;
  /** The key that names the models, e.g. `gpu-inference:modelRepository.models`. */
  readonly modelsKey: string;
  /** The model folders to upload; undefined: every model of a user's repository (see listModelRepositoryFiles). */
  readonly models?: readonly string[];
}

/** Top-level folders: the repository's models (a config.pbtxt is optional where the server can derive one). */
function modelsIn(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
}

/**
 * Lists the files of the chosen models of a local Triton model repository for upload, sorted by object name,
 * with each `config.pbtxt` switched to KIND_GPU (see toGpuModelConfig). Hidden folders (e.g. a build's staging
 * directory) are skipped. Every serving pod loads every uploaded model, and is ready only once all are: the
 * stack serves the models it names, or, naming none, every model of a user's own repository. The generated
 * example repository (its stamp file marks it) holds test models with random weights, so it is never served
 * whole by default.
 *
 * @throws Error when `dir` does not exist or holds no files, when a named model is not in it, or when it is the
 *   example repository and no models are named.
 */
export function listModelRepositoryFiles(dir: string, selection: ModelSelection): ModelRepositoryFile[] {
  const { sourceDirKey, modelsKey } = selection;
  if (!fs.existsSync(dir)) {
    throw new Error(`model repository ${dir} (${sourceDirKey}) does not exist: build the example repository with \`npm run models\`, or point ${sourceDirKey} at your own`);
  }
  const available = modelsIn(dir);
  if (selection.models === undefined && fs.existsSync(path.join(dir, STAMP_FILE_NAME))) {
    throw new Error(`model repository ${dir} (${sourceDirKey}) is the generated example repository (test models, most with random weights): name the models the stack serves in ${modelsKey} (it has ${available.join(", ")}), or point ${sourceDirKey} at your own repository`);
  }
  const missing = (selection.models ?? []).filter((model) => !available.includes(model));
  if (missing.length > 0) {
    throw new Error(`${modelsKey} names ${missing.join(", ")}, which ${dir} (${sourceDirKey}) does not have; it has ${available.length === 0 ? "no models" : available.join(", ")}`);
  }
  const models = selection.models ?? available;
  const files = models.flatMap((model) => walk(path.join(dir, model))).map((localPath): ModelRepositoryFile => {
    const objectName = path.relative(dir, localPath).split(path.sep).join("/");
    return path.basename(localPath) === "config.pbtxt"
      ? { objectName, localPath, content: toGpuModelConfig(fs.readFileSync(localPath, "utf8")) }
      : { objectName, localPath };
  });
  if (files.length === 0) throw new Error(`model repository ${dir} (${sourceDirKey}) is empty`);
  return files.sort((a, b) => (a.objectName < b.objectName ? -1 : 1));
}
