import fs from "node:fs/promises";
import path from "node:path";
import { buildExampleRepository, type BuildExampleRepositoryOptions } from "./build-example-repository";
import { findPackageRoot } from "./find-package-root";

/** Whether {@link ensureExampleRepository} found a repository or had to build one. */
export type EnsureExampleRepositoryResult = "present" | "built";

async function exists(dir: string): Promise<boolean> {
  try {
    await fs.access(dir);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds the example repository at `repositoryDir` only if nothing is there yet. An existing directory is
 * left untouched, whatever it holds: it is either a complete earlier build (builds are atomic) or the
 * user's own repository.
 */
export async function ensureExampleRepository(
  repositoryDir: string,
  options: BuildExampleRepositoryOptions = {},
): Promise<EnsureExampleRepositoryResult> {
  if (await exists(repositoryDir)) return "present";
  await buildExampleRepository(repositoryDir, options);
  return "built";
}

// `npm start`'s prestart step: `<repo>/models`, wherever the compiled or source module runs from.
if (require.main === module) {
  const repositoryDir = path.join(findPackageRoot(__dirname), "models");
  ensureExampleRepository(repositoryDir).then(
    (result) => console.log(`example model repository ${repositoryDir}: ${result}`),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
