import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isInside, type ModelDirectory } from "./model-repository";

const FILE_PREFIX = "file:";

/**
 * Where a `file:<path>` load parameter lands inside `root`. As in Triton, the path is joined under the model
 * directory (so `/x` means `<root>/x`) and must stay within it once `..` is resolved. Throws Triton's reason,
 * naming the normalized path relative to the model directory rather than the server's temporary path.
 */
function overridePath(root: string, key: string): string {
  const relative = key.slice(FILE_PREFIX.length);
  const target = path.join(root, relative);
  const inside = path.relative(root, target);
  if (relative.includes("\0") || inside === "" || !isInside(root, target)) {
    throw new Error(`Invalid file parameter '${key}' with normalized path '${inside || "."}' must stay within model directory.`);
  }
  return target;
}

/**
 * A model directory made of a load request's `file:` overrides (Triton's model repository extension), in a
 * temporary directory of its own that the server owns: the repository on disk is never touched. The core
 * removes it once no loaded version comes from it (unload, a later load, exit).
 */
export class OverrideDirectory {
  private constructor(readonly directory: ModelDirectory) {}

  /**
   * Writes `files` (`file:<path>` -> contents) into a fresh directory for model `name`. Every path is checked
   * before anything is written; on any failure nothing is left behind. Throws an Error with Triton's reason.
   */
  static async create(name: string, files: ReadonlyMap<string, Uint8Array>): Promise<OverrideDirectory> {
    const root = await mkdtemp(path.join(os.tmpdir(), "inference-server-override-"));
    try {
      const targets = [...files].map(([key, contents]) => ({ key, contents, target: overridePath(root, key) }));
      for (const { key, contents, target } of targets) {
        try {
          await mkdir(path.dirname(target), { recursive: true });
          await writeFile(target, contents);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOTDIR" || code === "EEXIST" || code === "EISDIR") {
            throw new Error(`Invalid file parameter '${key}', directory has been created as a file`, { cause: error });
          }
          throw error;
        }
      }
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
    return new OverrideDirectory({ name, path: root, symlinks: "inside" });
  }

  async remove(): Promise<void> {
    await rm(this.directory.path, { recursive: true, force: true });
  }
}
