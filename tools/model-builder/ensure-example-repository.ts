import fs from "node:fs/promises";
import path from "node:path";
import {
  buildExampleRepository, type BuildExampleRepositoryOptions, exampleRepositoryStamp, STAMP_FILE_NAME,
} from "./build-example-repository";
import { findPackageRoot } from "../../common/find-package-root";

/** Whether {@link ensureExampleRepository} found a repository, had to build one, or rebuilt an outdated one. */
export type EnsureExampleRepositoryResult = "present" | "built" | "rebuilt";

/** Models every build of the example repository has had, before builds were stamped. */
const UNSTAMPED_EXAMPLE_MODELS = ["simple", "identity_bf16", "mlp", "resnet50"];

async function exists(dir: string): Promise<boolean> {
  try {
    await fs.access(dir);
    return true;
  } catch {
    return false;
  }
}

async function isOutdatedExampleBuild(repositoryDir: string, options: BuildExampleRepositoryOptions): Promise<boolean> {
  try {
    const stamp = await fs.readFile(path.join(repositoryDir, STAMP_FILE_NAME), "utf8");
    return stamp.trim() !== exampleRepositoryStamp(options);
  } catch {
    const models = await Promise.all(UNSTAMPED_EXAMPLE_MODELS.map((model) => exists(path.join(repositoryDir, model, "config.pbtxt"))));
    return models.every(Boolean);
  }
}

/**
 * Builds the example repository at `repositoryDir` if nothing is there yet, and rebuilds it when it is an example
 * build that the builder, the seed or the shared data have since changed (its stamp differs; builds from before
 * stamps are recognised by their models). Any other directory is left untouched: it is the user's own.
 */
export async function ensureExampleRepository(
  repositoryDir: string,
  options: BuildExampleRepositoryOptions = {},
): Promise<EnsureExampleRepositoryResult> {
  if (!(await exists(repositoryDir))) {
    await buildExampleRepository(repositoryDir, options);
    return "built";
  }
  if (!(await isOutdatedExampleBuild(repositoryDir, options))) return "present";
  await buildExampleRepository(repositoryDir, options);
  return "rebuilt";
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
