import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** A throwaway model repository holding one model under its own name. */
export interface CandidateRepository {
  readonly path: string;
  remove(): Promise<void>;
}

/** Recreates `from` under `to`: folders as real folders (the server lists version folders as directories), files as links. */
async function mirror(from: string, to: string, skip: ReadonlySet<string>): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from)) {
    if (skip.has(name)) continue;
    const source = path.join(from, name);
    if ((await stat(source)).isDirectory()) await mirror(source, path.join(to, name), new Set());
    else await symlink(source, path.join(to, name));
  }
}

/**
 * A repository in the temporary folder with `modelName` holding `configText` as its config.pbtxt, beside links to
 * every other file of the user's model folder (version folders, label files, warmup data). The user's folder is only
 * read: a candidate never touches it.
 */
export async function createCandidateRepository(modelDirectory: string, modelName: string, configText: string): Promise<CandidateRepository> {
  const root = await mkdtemp(path.join(os.tmpdir(), "inference-tune-"));
  try {
    const modelPath = path.join(root, modelName);
    await mirror(path.resolve(modelDirectory), modelPath, new Set(["config.pbtxt"]));
    await writeFile(path.join(modelPath, "config.pbtxt"), configText);
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return { path: root, remove: () => rm(root, { recursive: true, force: true }) };
}
