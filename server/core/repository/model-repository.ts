import { type Dirent, existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

/**
 * Where symlinks in a model repository may lead: `inside` the model's own directory (a model directory's own link:
 * inside its repository), or `any`where, as Triton follows them (`--model-symlinks`).
 */
export type SymlinkPolicy = "inside" | "any";

/** One `<repository>/<model>` folder. */
export interface ModelDirectory {
  readonly name: string;
  readonly path: string;
  readonly symlinks: SymlinkPolicy;
  /** Why this entry cannot be served (a symlink that leads out of the repository...): loading it fails with this. */
  readonly problem?: string;
}

/** Whether `candidate` is `root` or lies under it, judged on the paths as written (symlinks are the caller's concern). */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/**
 * The path of `relative` inside a model directory, refusing (throwing) one that leaves it: through `..` or an
 * absolute name, or through a symlink whose target lies outside the directory's own real path. A model repository
 * must not be a way to read other files of the host (a label file linked to /etc/passwd would be served through
 * classification). Under the `any` policy symlinks are followed wherever they lead; a name that leaves the
 * directory itself is refused either way. A name that does not exist is returned as is, for the caller to report
 * as missing. `what` names the file in error messages, e.g. `label_filename 'labels.txt'`.
 */
export function resolveInsideModel(modelPath: string, relative: string, what: string, symlinks: SymlinkPolicy): string {
  const lexical = path.resolve(modelPath, relative);
  if (path.isAbsolute(relative) || !isInside(path.resolve(modelPath), lexical)) {
    throw new Error(`${what} points outside the model directory`);
  }
  if (symlinks === "any") return lexical;
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return lexical;
    throw new Error(`${what} cannot be resolved: ${errorCode(error)}`, { cause: error });
  }
  if (!isInside(realpathSync(modelPath), real)) {
    throw new Error(`${what} resolves (through a symlink) outside the model directory (--model-symlinks any follows such links)`);
  }
  return real;
}

/**
 * A repository entry that is a symlink: followed when it resolves to a directory inside the repository (a
 * `current -> resnet50_v2` switch), refused with the reason otherwise, so the repository index says why the
 * model is not served instead of leaving it out silently.
 */
function symlinkedModel(repositoryRealPath: string, entryPath: string, name: string, symlinks: SymlinkPolicy): ModelDirectory | undefined {
  let target: string;
  try {
    target = realpathSync(entryPath);
  } catch (error) {
    return { name, path: entryPath, symlinks, problem: `the model directory is a symlink that cannot be resolved: ${errorCode(error)}` };
  }
  if (!statSync(target).isDirectory()) return undefined;
  if (symlinks === "inside" && !isInside(repositoryRealPath, target)) {
    return { name, path: entryPath, symlinks, problem: "the model directory is a symlink to a directory outside the model repository (--model-symlinks any follows such links)" };
  }
  return { name, path: entryPath, symlinks };
}

/**
 * Lists model folders across repositories. A name found in two repositories is reported once, as a duplicate
 * (Triton requires model names to be unique across repositories).
 */
export function listModelDirectories(
  repositories: readonly string[], symlinks: SymlinkPolicy,
): { models: ModelDirectory[]; duplicates: ModelDirectory[] } {
  const byName = new Map<string, ModelDirectory>();
  const duplicates: ModelDirectory[] = [];
  for (const repository of repositories) {
    if (!existsSync(repository) || !statSync(repository).isDirectory()) {
      throw new Error(`model repository '${repository}' does not exist or is not a directory`);
    }
    const repositoryRealPath = realpathSync(repository);
    for (const entry of readdirSync(repository, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const entryPath = path.join(repository, entry.name);
      const model = entry.isSymbolicLink() ? symlinkedModel(repositoryRealPath, entryPath, entry.name, symlinks)
        : entry.isDirectory() ? { name: entry.name, path: entryPath, symlinks } : undefined;
      if (model === undefined) continue;
      if (byName.has(model.name)) duplicates.push(model);
      else byName.set(model.name, model);
    }
  }
  return { models: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), duplicates };
}

function isDirectoryOrLinkToOne(parent: string, entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(path.join(parent, entry.name)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Version folders as Triton reads them: numeric names without a leading zero, ascending. A symlinked version
 * folder counts; the model file inside it is then checked to stay inside the model directory.
 */
export function listVersions(modelPath: string): number[] {
  return readdirSync(modelPath, { withFileTypes: true })
    .filter((entry) => /^[1-9][0-9]*$/.test(entry.name) && isDirectoryOrLinkToOne(modelPath, entry))
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

/** The model's config.pbtxt, undefined when there is none; throws when it is a symlink out of the model directory. */
export function readConfigText(directory: ModelDirectory): string | undefined {
  const file = resolveInsideModel(directory.path, "config.pbtxt", "config.pbtxt", directory.symlinks);
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** Reads a label file: one label per line, line index = class index; a trailing newline adds no class. */
export function readLabels(directory: ModelDirectory, labelFilename: string): string[] {
  const file = resolveInsideModel(directory.path, labelFilename, `label_filename '${labelFilename}'`, directory.symlinks);
  if (!existsSync(file)) throw new Error(`label file '${labelFilename}' not found in ${directory.path}`);
  const lines = readFileSync(file, "utf8").split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}
