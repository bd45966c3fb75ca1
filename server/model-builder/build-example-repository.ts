import fs from "node:fs/promises";
import path from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { type ExampleModel } from "./example-model";
import { buildIdentityModels } from "./models/identity-models";
import { buildMlpModel } from "./models/mlp-model";
import { buildGpuResnet50Models, buildResnet50Model } from "./models/resnet50-model";
import { buildSimpleModel } from "./models/simple-model";

/** The seed of the example repository that `npm run models` and `npm start` build. */
export const DEFAULT_EXAMPLE_SEED = 20_240_601;

export interface BuildExampleRepositoryOptions {
  /** Seed of the weight generator; the same seed always yields byte-identical files. */
  readonly seed?: number;
  /** Only the GPU variants of resnet50 (FP32 batched and unbatched, FP16), for `npm run test:gpu` and `bench --gpu`. */
  readonly gpu?: boolean;
}

// A generator so that only one model's bytes (resnet50: ~100 MB) are in memory at a time.
function* exampleModels(seed: number): Generator<ExampleModel> {
  yield buildSimpleModel();
  yield* buildIdentityModels();
  yield buildMlpModel(seed);
  yield buildResnet50Model(seed);
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
 * Writes the example model repository (simple, identity_* for every datatype, mlp, resnet50) to `outDir`,
 * replacing whatever is there. The models are built in a hidden sibling directory and renamed into place
 * at the end, so an interrupted or failed build never leaves a partial repository at `outDir`.
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
    const seed = options.seed ?? DEFAULT_EXAMPLE_SEED;
    for (const model of options.gpu === true ? buildGpuResnet50Models(seed) : exampleModels(seed)) {
      await writeModel(stagingDir, model);
    }
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
    .description("Write the example Triton model repository (ONNX models with seeded weights).")
    .requiredOption("--out <dir>", "repository directory to create or replace")
    .option("--seed <integer>", "weight seed", parseSeed, DEFAULT_EXAMPLE_SEED)
    .option("--gpu", "write the GPU repository instead: resnet50_gpu, resnet50_gpu_unbatched, resnet50_fp16_gpu (KIND_GPU)")
    .parse(argv)
    .opts<{ out: string; seed: number; gpu?: boolean }>();
  const startedMs = performance.now();
  await buildExampleRepository(options.out, { seed: options.seed, gpu: options.gpu === true });
  console.log(`example model repository written to ${path.resolve(options.out)} in ${Math.round(performance.now() - startedMs)} ms`);
}

if (require.main === module) {
  main(process.argv).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
