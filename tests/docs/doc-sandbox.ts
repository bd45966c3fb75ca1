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
 * Makes `<tmp>/repo` with links to the repository's package.json, tsconfig.json, node_modules and dist, a
 * `models/` folder of links to each example model (so a page may add a model without touching the real
 * repository), and `<tmp>/shared` linked to the repository's `../shared`, so `../shared/data` reads as in a
 * checkout. Files the commands write (certificates, traces, a model's build) stay in the sandbox.
 */
export function createDocSandbox(): DocSandbox {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "doc-snippets-"));
  const root = path.join(top, "repo");
  fs.mkdirSync(path.join(root, "models"), { recursive: true });
  for (const name of LINKED) fs.symlinkSync(path.join(REPO_ROOT, name), path.join(root, name));
  const models = path.join(REPO_ROOT, "models");
  for (const model of fs.readdirSync(models)) fs.symlinkSync(path.join(models, model), path.join(root, "models", model));
  fs.symlinkSync(path.resolve(REPO_ROOT, "../shared"), path.join(top, "shared"));
  return { root, remove: () => fs.rmSync(top, { recursive: true, force: true }) };
}
