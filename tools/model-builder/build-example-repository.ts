import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Command, InvalidArgumentError } from "@commander-js/extra-typings";
import { type ExampleModel } from "./example-model";
import { findPackageRoot } from "../../common/find-package-root";
import { buildIdentityModels } from "./models/identity-models";
import { buildImageClassifierModels, imageClassifierSources } from "./models/image-classifier-models";
import { buildMlpModel } from "./models/mlp-model";
import { buildGpuResnet50Models, buildResnet50Model } from "./models/resnet50-model";
import { buildSimpleModel } from "./models/simple-model";
import { buildTextGeneratorModel } from "./models/text-generator-model";
import { buildTextWordsModel } from "./models/text-words-model";
import { STAMP_FILE_NAME } from "../../common/example-repository-stamp";
import { typeScriptCompilerInstalled } from "./compile-typescript-model";

/** The seed of the example repository that `npm run models` and `npm start` build. */
export const DEFAULT_EXAMPLE_SEED = 20_240_601;

export interface BuildExampleRepositoryOptions {
  /** Seed of the weight generator; the same seed always yields byte-identical files. */
  readonly seed?: number;
  /** Only the GPU variants of resnet50 (FP32 batched and unbatched, FP16), for `npm run test:gpu` and `bench --gpu`. */
  readonly gpu?: boolean;
  /**
   * The shared data folder with the real SqueezeNet and labels the image_classifier pipeline needs (default
   * `../shared/data` beside the package); without it the pipeline is left out.
   */
  readonly sharedDataDir?: string;
  /** Where the builder says what it left out (default: stdout). */
  readonly log?: (line: string) => void;
}

export { STAMP_FILE_NAME };

const PACKAGE_ROOT = findPackageRoot(__dirname);

function defaultSharedDataDir(): string {
  return path.resolve(PACKAGE_ROOT, "..", "shared", "data");
}

/** The options with their defaults filled in, and whether the shared data for image_classifier is there. */
interface ResolvedBuildOptions {
  readonly seed: number;
  readonly gpu: boolean;
  readonly sharedDataDir: string;
  readonly hasImageClassifierSources: boolean;
  /** Whether the TypeScript models can be built: `typescript` is a devDependency. */
  readonly typeScriptModels: boolean;
}

function resolveBuildOptions(options: BuildExampleRepositoryOptions): ResolvedBuildOptions {
  const sharedDataDir = options.sharedDataDir ?? defaultSharedDataDir();
  const sources = imageClassifierSources(sharedDataDir);
  return {
    seed: options.seed ?? DEFAULT_EXAMPLE_SEED,
    gpu: options.gpu === true,
    sharedDataDir,
    hasImageClassifierSources: existsSync(sources.model) && existsSync(sources.labels),
    typeScriptModels: typeScriptCompilerInstalled(),
  };
}

// A generator so that only one model's bytes (resnet50: ~100 MB) are in memory at a time.
function* exampleModels(options: ResolvedBuildOptions, log: (line: string) => void): Generator<ExampleModel> {
  yield buildSimpleModel();
  yield* buildIdentityModels();
  yield buildMlpModel(options.seed);
  yield buildResnet50Model(options.seed);
  if (!options.typeScriptModels) {
    log("example repository: leaving out the TypeScript models (text_generator, text_words, image_classifier): the typescript package is not installed (production dependencies only)");
    return;
  }
  yield buildTextGeneratorModel(PACKAGE_ROOT);
  yield buildTextWordsModel(PACKAGE_ROOT);
  if (options.hasImageClassifierSources) {
    yield* buildImageClassifierModels(PACKAGE_ROOT, options.sharedDataDir);
  } else {
    log(`example repository: leaving out image_classifier and its steps: no SqueezeNet 1.1 FP16 and labels under ${options.sharedDataDir}`);
  }
}

function stampOf(options: ResolvedBuildOptions): string {
  const hash = createHash("sha256");
  const builderDir = path.join(PACKAGE_ROOT, "tools", "model-builder");
  for (const entry of readdirSync(builderDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
    const file = path.join(entry.parentPath, entry.name);
    hash.update(path.relative(builderDir, file)).update(readFileSync(file));
  }
  hash.update(`seed=${options.seed};gpu=${options.gpu};image_classifier=${options.hasImageClassifierSources};typescript_models=${options.typeScriptModels}`);
  return hash.digest("hex");
}

/**
 * What a build with these options from this source tree produces, as a digest: the builder's own sources (every
 * file under tools/model-builder, model sources included), the seed, and whether the shared data is there.
 * A repository whose stamp differs is out of date.
 */
export function exampleRepositoryStamp(options: BuildExampleRepositoryOptions = {}): string {
  return stampOf(resolveBuildOptions(options));
}

async function writeModel(repositoryDir: string, model: ExampleModel): Promise<void> {
  for (const file of model.files) {
    const filePath = path.join(repositoryDir, model.name, file.relativePath);
    await fs.mkdir(path.dirname(filePath), { recursive: true });
    await fs.writeFile(filePath, file.contents);
  }
}

function isMissingFileError(error: unknown): boolean {
  return error instanceof Error && "code" in error && error.code === "ENOENT";
}

/**
 * Moves the finished `stagingDir` to `targetDir`. rename() cannot replace a non-empty directory, so an
 * existing target is first moved aside and deleted afterwards: readers see the old or the new repository,
 * never a mix, and the old one comes back if the final rename fails.
 */
async function replaceDirectory(stagingDir: string, targetDir: string): Promise<void> {
  const retiredDir = `${stagingDir}-previous`;
  let hadPrevious = true;
  try {
    await fs.rename(targetDir, retiredDir);
  } catch (error) {
    if (!isMissingFileError(error)) throw error;
    hadPrevious = false;
  }
  try {
    await fs.rename(stagingDir, targetDir);
  } catch (error) {
    if (hadPrevious) await fs.rename(retiredDir, targetDir);
    throw error;
  }
  if (hadPrevious) await fs.rm(retiredDir, { recursive: true, force: true });
}

/**
 * Writes the example model repository (simple, identity_* for every datatype, mlp, resnet50, and the
 * image_classifier pipeline when the shared data is there) to `outDir`, replacing whatever is there. The models
 * are built in a hidden sibling directory and renamed into place at the end, so an interrupted or failed build
 * never leaves a partial repository at `outDir`.
 */
export async function buildExampleRepository(
  outDir: string,
  options: BuildExampleRepositoryOptions = {},
): Promise<void> {
  const targetDir = path.resolve(outDir);
  const parentDir = path.dirname(targetDir);
  await fs.mkdir(parentDir, { recursive: true });
  const stagingDir = await fs.mkdtemp(path.join(parentDir, `.${path.basename(targetDir)}.building-`));
  try {
    // mkdtemp creates the directory as 0700; the repository must stay readable by a server running as
    // another user (e.g. a container's non-root user).
    await fs.chmod(stagingDir, 0o755);
    const resolved = resolveBuildOptions(options);
    const models = resolved.gpu ? buildGpuResnet50Models(resolved.seed) : exampleModels(resolved, options.log ?? console.log);
    for (const model of models) {
      await writeModel(stagingDir, model);
    }
    await fs.writeFile(path.join(stagingDir, STAMP_FILE_NAME), `${stampOf(resolved)}\n`);
    await replaceDirectory(stagingDir, targetDir);
  } catch (error) {
    await fs.rm(stagingDir, { recursive: true, force: true });
    throw error;
  }
}

function parseSeed(value: string): number {
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new InvalidArgumentError("the seed must be an integer");
  return seed;
}

async function main(argv: readonly string[]): Promise<void> {
  const options = new Command()
    .name("build-example-repository")
    .description("Write the example Triton model repository (ONNX models with seeded weights, the image_classifier pipeline).")
    .requiredOption("--out <dir>", "repository directory to create or replace")
    .option("--seed <integer>", "weight seed", parseSeed, DEFAULT_EXAMPLE_SEED)
    .option("--shared-data <dir>", "folder with the real SqueezeNet and labels for image_classifier", defaultSharedDataDir())
    .option("--gpu", "write the GPU repository instead: resnet50_gpu, resnet50_gpu_unbatched, resnet50_fp16_gpu (KIND_GPU)")
    .parse(argv)
    .opts();
  const startedMs = performance.now();
  await buildExampleRepository(options.out, { seed: options.seed, sharedDataDir: options.sharedData, gpu: options.gpu === true });
  console.log(`example model repository written to ${path.resolve(options.out)} in ${Math.round(performance.now() - startedMs)} ms`);
}

if (require.main === module) {
  main(process.argv).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
