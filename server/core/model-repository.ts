import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** One `<repository>/<model>` folder. */
export interface ModelDirectory {
  readonly name: string;
  readonly path: string;
}

/**
 * Lists model folders across repositories. A name found in two repositories is reported once, as a duplicate
 * (Triton requires model names to be unique across repositories).
 */
export function listModelDirectories(repositories: readonly string[]): { models: ModelDirectory[]; duplicates: ModelDirectory[] } {
  const byName = new Map<string, ModelDirectory>();
  const duplicates: ModelDirectory[] = [];
  for (const repository of repositories) {
    if (!existsSync(repository) || !statSync(repository).isDirectory()) {
      throw new Error(`model repository '${repository}' does not exist or is not a directory`);
    }
    for (const entry of readdirSync(repository, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const model = { name: entry.name, path: path.join(repository, entry.name) };
      if (byName.has(model.name)) duplicates.push(model);
      else byName.set(model.name, model);
    }
  }
  return { models: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), duplicates };
}

/** Version folders as Triton reads them: numeric names without a leading zero, ascending. */
export function listVersions(modelPath: string): number[] {
  return readdirSync(modelPath, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[1-9][0-9]*$/.test(entry.name))
    .map((entry) => Number(entry.name))
    .filter((version) => Number.isSafeInteger(version))
    .sort((a, b) => a - b);
}

/**
 * What a model directory holds, as paths, sizes and modification times of everything in it: poll mode reloads a
 * model when this changes (a new version folder, a replaced model file, an edited config or label file).
 */
export function directoryFingerprint(modelPath: string): string {
  const parts: string[] = [];
  const walk = (relative: string): void => {
    const entries = readdirSync(path.join(modelPath, relative), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) {
        parts.push(`${child}/`);
        walk(child);
      } else {
        const stats = statSync(path.join(modelPath, child));
        parts.push(`${child}:${stats.size}:${stats.mtimeMs}`);
      }
    }
  };
  try {
    walk("");
  } catch {
    parts.push("(unreadable)"); // removed or replaced mid-walk: differs from any complete listing
  }
  return parts.join("\n");
}

export function readConfigText(modelPath: string): string | undefined {
  const file = path.join(modelPath, "config.pbtxt");
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** Reads a label file: one label per line, line index = class index; a trailing newline adds no class. */
export function readLabels(modelPath: string, labelFilename: string): string[] {
  const file = path.resolve(modelPath, labelFilename);
  if (path.relative(modelPath, file).startsWith("..")) throw new Error(`label_filename '${labelFilename}' points outside the model directory`);
  if (!existsSync(file)) throw new Error(`label file '${labelFilename}' not found in ${modelPath}`);
  const lines = readFileSync(file, "utf8").split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}
