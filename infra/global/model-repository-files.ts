import fs from "node:fs";
import path from "node:path";
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

/**
 * Lists the files of a local Triton model repository for upload, sorted by object name, with each
 * `config.pbtxt` switched to KIND_GPU (see toGpuModelConfig). Hidden folders (e.g. a build's staging
 * directory) are skipped.
 *
 * @param configKey the stack config key that set `dir`, named in the error when it is missing.
 * @throws Error when `dir` does not exist or holds no files.
 */
export function listModelRepositoryFiles(dir: string, configKey: string): ModelRepositoryFile[] {
  if (!fs.existsSync(dir)) {
    throw new Error(`model repository ${dir} (${configKey}) does not exist: build the example repository with \`npm run models\`, or point ${configKey} at your own`);
  }
  const files = walk(dir).map((localPath): ModelRepositoryFile => {
    const objectName = path.relative(dir, localPath).split(path.sep).join("/");
    return path.basename(localPath) === "config.pbtxt"
      ? { objectName, localPath, content: toGpuModelConfig(fs.readFileSync(localPath, "utf8")) }
      : { objectName, localPath };
  });
  if (files.length === 0) throw new Error(`model repository ${dir} (${configKey}) is empty`);
  return files.sort((a, b) => (a.objectName < b.objectName ? -1 : 1));
}
