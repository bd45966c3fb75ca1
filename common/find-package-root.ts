import fs from "node:fs";
import path from "node:path";

/**
 * The nearest folder at or above `startDir` that holds a `package.json`: the repository root, whether the
 * caller runs from source (`server/...`) or from the compiled `dist/server/...`. Throws when there is none.
 */
export function findPackageRoot(startDir: string): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json at or above ${startDir}`);
    dir = parent;
  }
}
