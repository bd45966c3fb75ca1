import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./doc-pages";

/** A throwaway copy of the repository root in which documented commands run as written. */
export interface DocSandbox {
  /** Where the commands run: stands for the repository root. */
  readonly root: string;
  remove(): void;
}

const LINKED = ["package.json", "tsconfig.json", "node_modules", "dist"];

/**
 * Mirrors a folder with hard links (copies where the file system refuses them): the server refuses model folders
 * that are symbolic links out of their repository, and a page may add a model without touching the real one.
 */
function mirror(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) mirror(source, target);
    else {
      try {
        fs.linkSync(source, target);
      } catch {
        fs.copyFileSync(source, target);
      }
    }
  }
}

/**
 * Makes `<tmp>/repo` with links to the repository's package.json, tsconfig.json, node_modules and dist, a mirror
 * of the example repository `models/`, and `<tmp>/shared` linked to the repository's `../shared`, so
 * `../shared/data` reads as in a checkout. Files the commands write (certificates, traces, a model's build) stay
 * in the sandbox; no documented command rewrites an example model's files in place.
 */
export function createDocSandbox(): DocSandbox {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "doc-snippets-"));
  const root = path.join(top, "repo");
  mirror(path.join(REPO_ROOT, "models"), path.join(root, "models"));
  for (const name of LINKED) fs.symlinkSync(path.join(REPO_ROOT, name), path.join(root, name));
  fs.symlinkSync(path.resolve(REPO_ROOT, "../shared"), path.join(top, "shared"));
  return { root, remove: () => fs.rmSync(top, { recursive: true, force: true }) };
}
