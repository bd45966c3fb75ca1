#!/usr/bin/env node
/**
 * `npm run test:gpu`: proves the GPU path end to end on a machine with an NVIDIA GPU. It serves the real SqueezeNet
 * 1.1 FP16 (../shared/data) and the resnet50 GPU variants through the server, and checks that every KIND_GPU model
 * (and a KIND_AUTO one) runs on a GPU provider, that outputs equal the CPU execution provider's within a stated
 * tolerance with the same top-1, that mug.jpg is 504 COFFEE MUG, and that nv_gpu_* metrics carry the GPU's UUID.
 * It is a plain Node program, compiled with the bench, so it runs where only production dependencies are installed.
 * On a machine without a GPU it prints one line and exits 2, unless `--allow-software-gpu` has it check the same path
 * on a software WebGPU adapter (all but the nv_gpu_* metrics, which need an NVIDIA GPU): `npm test` runs it so.
 */
import { execFileSync } from "node:child_process";
import { Command } from "@commander-js/extra-typings";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { InferenceClient, type InferInput } from "../client/index";
import { fromFloat16Array, toFloat16Array } from "../protocol/float16";
import { buildExampleRepository, SeededRandom } from "../tools/model-builder/index";
import { findPackageRoot } from "../common/find-package-root";
import { startInferenceServerProcess } from "../tools/tune/index";

const ROOT = findPackageRoot(__dirname);
/** SqueezeNet 1.1 FP16, under the shared data folder. */
const SQUEEZENET = path.join("models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx");
/** FP16 probabilities: ONNX Runtime's CPU and GPU kernels accumulate differently; 1e-2 is a few FP16 steps near 1. */
const SQUEEZENET_TOLERANCE = 1e-2;
/** Largest difference from the CPU provider, relative to the range of the logits. */
const FP32_TOLERANCE = 1e-3;
const FP16_TOLERANCE = 2e-2;
const IMAGES = 4;

interface GpuCheckOptions {
  /** The folder with SqueezeNet 1.1 FP16, its labels and mug.jpg (`../shared/data`'s layout). */
  readonly sharedData: string;
  /** Where nvidia-smi lists no GPU, serve KIND_GPU on a software WebGPU adapter (the server's flag of that name). */
  readonly allowSoftwareGpu: boolean;
}

function parseOptions(argv: readonly string[]): GpuCheckOptions {
  const options = new Command("test:gpu")
    .description("Serve SqueezeNet and resnet50 on the GPU through the server and check them against the CPU provider")
    .option("--shared-data <dir>", "folder with SqueezeNet 1.1 FP16, its labels and mug.jpg", path.resolve(ROOT, "..", "shared", "data"))
    .option("--allow-software-gpu", "without an NVIDIA GPU, check on a software WebGPU adapter (source .webgpu-on-cpu/env.sh first)", false)
    .parse(argv, { from: "user" })
    .opts();
  return { sharedData: path.resolve(options.sharedData), allowSoftwareGpu: options.allowSoftwareGpu };
}

interface Check {
  readonly name: string;
  readonly run: () => Promise<string>;
}

/** UUIDs of the GPUs nvidia-smi lists; empty when there is no driver or no GPU. */
function gpuUuids(): string[] {
  try {
    return execFileSync("nvidia-smi", ["--query-gpu=uuid", "--format=csv,noheader"], { encoding: "utf8", timeout: 10_000 })
      .split("\n").map((line) => line.trim()).filter((line) => line.startsWith("GPU-"));
  } catch {
    return [];
  }
}

function squeezenetModel(sharedData: string, repository: string, name: string, instanceGroup: string): void {
  const dir = path.join(repository, name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  copyFileSync(path.join(sharedData, SQUEEZENET), path.join(dir, "1", "model.onnx"));
  copyFileSync(path.join(sharedData, "labels", "densenet_labels.txt"), path.join(dir, "labels.txt"));
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'platform: "onnxruntime_onnx"', "max_batch_size: 0",
    'input [ { name: "data_0" data_type: TYPE_FP16 dims: [ 1, 3, 224, 224 ] } ]',
    'output [ { name: "softmaxout_1" data_type: TYPE_FP16 dims: [ 1, 1000, 1, 1 ] label_filename: "labels.txt" } ]',
    instanceGroup,
  ].join("\n"));
}

/** mug.jpg as this Caffe2-exported SqueezeNet wants it: 224x224, BGR planes, raw 0-255, FP16 (../shared/data/README.md). */
async function mugInput(sharedData: string): Promise<Uint16Array> {
  const { data } = await sharp(path.join(sharedData, "images", "mug.jpg")).removeAlpha().resize(224, 224, { fit: "fill", kernel: "linear" }).raw().toBuffer({ resolveWithObject: true });
  const planes = new Float32Array(3 * 224 * 224);
  for (let i = 0; i < 224 * 224; i++) for (let c = 0; c < 3; c++) planes[(2 - c) * 224 * 224 + i] = data[i * 3 + c]!;
  return toFloat16Array(planes);
}

async function cpuRun(modelPath: string, feeds: Record<string, ort.Tensor>, output: string): Promise<ort.Tensor> {
  const session = await ort.InferenceSession.create(modelPath, { executionProviders: ["cpu"], intraOpNumThreads: os.cpus().length });
  try {
    return (await session.run(feeds))[output]!;
  } finally {
    await session.release();
  }
}

const argmax = (values: ArrayLike<number>, from = 0, length = values.length - from): number => {
  let best = from;
  for (let i = from + 1; i < from + length; i++) if (values[i]! > values[best]!) best = i;
  return best - from;
};

/** Largest |a - b| over the range of `b`, and the rows (of `rowLength`) whose top-1 differs where `b` has a clear winner. */
function compare(a: ArrayLike<number>, b: ArrayLike<number>, rowLength: number, tolerance: number): { relative: number; flipped: number[] } {
  let low = Infinity;
  let high = -Infinity;
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    low = Math.min(low, b[i]!);
    high = Math.max(high, b[i]!);
    worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  }
  const range = high - low || 1;
  const flipped: number[] = [];
  for (let row = 0; row * rowLength < b.length; row++) {
    const expected = argmax(b, row * rowLength, rowLength);
    const sorted = Array.from({ length: rowLength }, (_, i) => b[row * rowLength + i]!).sort((x, y) => y - x);
    // Top-1 must agree unless the reference's top two are closer than the tolerance allows either to move.
    if (argmax(a, row * rowLength, rowLength) !== expected && sorted[0]! - sorted[1]! > 2 * tolerance * range) flipped.push(row);
  }
  return { relative: worst / range, flipped };
}

async function main(options: GpuCheckOptions): Promise<number> {
  const squeezenet = path.join(options.sharedData, SQUEEZENET);
  if (!existsSync(squeezenet)) {
    process.stderr.write(`test:gpu: ${squeezenet} is missing: the check needs ../shared/data beside the repository, or --shared-data\n`);
    return 2;
  }
  const uuids = gpuUuids();
  const software = uuids.length === 0;
  if (software && !options.allowSoftwareGpu) {
    process.stderr.write("test:gpu: no NVIDIA GPU found (nvidia-smi lists none); run it on a machine with an NVIDIA GPU and its driver, or with --allow-software-gpu\n");
    return 2;
  }
  const repository = mkdtempSync(path.join(os.tmpdir(), "gpu-check-"));
  await buildExampleRepository(repository, { gpu: true, sharedDataDir: options.sharedData });
  squeezenetModel(options.sharedData, repository, "squeezenet_gpu", "instance_group [ { count: 1 kind: KIND_GPU } ]");
  squeezenetModel(options.sharedData, repository, "squeezenet_auto", "");
  const server = await startInferenceServerProcess(repository, [
    "--metrics-interval-ms", "200", "--exit-on-error", "false", ...(options.allowSoftwareGpu ? ["--allow-software-gpu"] : []),
  ]);
  const client = new InferenceClient({ url: `grpc://${server.grpcAddress}` });
  const random = new SeededRandom(11);
  const images = Float32Array.from({ length: IMAGES * 3 * 224 * 224 }, () => random.nextFloat());
  const metrics = async (): Promise<string> => (await fetch(`${server.metricsUrl!}/metrics`)).text();

  const checks: Check[] = [
    {
      name: "every model is READY",
      run: async () => {
        const index = await client.repositoryIndex();
        const notReady = index.filter((e) => e.state !== "READY");
        if (notReady.length > 0) throw new Error(notReady.map((e) => `${e.name}: ${e.reason}`).join("; "));
        return index.map((e) => e.name).join(", ");
      },
    },
    {
      name: "KIND_GPU models and the KIND_AUTO one run on a GPU provider (inference_instance_placement)",
      run: async () => {
        const text = await metrics();
        const placements = [...text.matchAll(/^inference_instance_placement\{([^}]*)\} (\d+)/gm)].map((m) => Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]])));
        const wrong = ["resnet50_gpu", "resnet50_gpu_unbatched", "resnet50_fp16_gpu", "squeezenet_gpu", "squeezenet_auto"]
          .filter((model) => !placements.some((p) => p["model"] === model && p["kind"] === "KIND_GPU" && p["provider"] !== "cpu"));
        if (wrong.length > 0) throw new Error(`not on a GPU provider: ${wrong.join(", ")}\n${placements.map((p) => JSON.stringify(p)).join("\n")}`);
        return [...new Set(placements.map((p) => p["provider"]))].join(", ");
      },
    },
    {
      name: "squeezenet on the GPU: mug.jpg is 504 COFFEE MUG, probabilities equal the CPU provider's",
      run: async () => {
        const input = await mugInput(options.sharedData);
        const inputs: InferInput[] = [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224], data: input }];
        const top = await client.infer("squeezenet_gpu", inputs, { outputs: [{ name: "softmaxout_1", classification: 1 }] });
        const label = top.data("softmaxout_1", "BYTES")[0];
        const labelText = typeof label === "string" ? label : Buffer.from(label ?? []).toString();
        if (!/:504:COFFEE MUG$/.test(labelText)) throw new Error(`top-1 is ${labelText}`);
        const gpu = fromFloat16Array((await client.infer("squeezenet_gpu", inputs)).data("softmaxout_1", "FP16") as Uint16Array);
        const cpu = fromFloat16Array((await cpuRun(squeezenet, { data_0: new ort.Tensor("float16", input, [1, 3, 224, 224]) }, "softmaxout_1")).data as Uint16Array);
        const worst = Math.max(...Array.from(gpu, (v, i) => Math.abs(v - cpu[i]!)));
        if (worst > SQUEEZENET_TOLERANCE) throw new Error(`max |GPU - CPU| = ${worst} > ${SQUEEZENET_TOLERANCE}`);
        return `${labelText}, max |GPU - CPU| ${worst.toExponential(2)} (tolerance ${SQUEEZENET_TOLERANCE})`;
      },
    },
    {
      name: `resnet50 FP32 on the GPU, batch ${IMAGES}: logits equal the CPU provider's, same top-1`,
      run: async () => {
        const gpu = (await client.infer("resnet50_gpu", [{ name: "input", datatype: "FP32", shape: [IMAGES, 3, 224, 224], data: images }])).data("output", "FP32") as Float32Array;
        const cpu = (await cpuRun(path.join(repository, "resnet50_gpu", "1", "model.onnx"), { input: new ort.Tensor("float32", images, [IMAGES, 3, 224, 224]) }, "output")).data as Float32Array;
        const { relative, flipped } = compare(gpu, cpu, 1000, FP32_TOLERANCE);
        if (relative > FP32_TOLERANCE || flipped.length > 0) throw new Error(`max |GPU - CPU| / range = ${relative}, top-1 differs in rows ${flipped.join(", ") || "none"}`);
        return `max |GPU - CPU| / range ${relative.toExponential(2)} (tolerance ${FP32_TOLERANCE})`;
      },
    },
    {
      name: `resnet50 FP16 on the GPU, batch ${IMAGES}: logits equal FP32 on the CPU within FP16's error, same top-1`,
      run: async () => {
        const gpu = fromFloat16Array((await client.infer("resnet50_fp16_gpu", [{ name: "input", datatype: "FP16", shape: [IMAGES, 3, 224, 224], data: toFloat16Array(images) }])).data("output", "FP16") as Uint16Array);
        const cpu = (await cpuRun(path.join(repository, "resnet50_gpu", "1", "model.onnx"), { input: new ort.Tensor("float32", images, [IMAGES, 3, 224, 224]) }, "output")).data as Float32Array;
        const { relative, flipped } = compare(gpu, cpu, 1000, FP16_TOLERANCE);
        if (relative > FP16_TOLERANCE || flipped.length > 0) throw new Error(`max |GPU FP16 - CPU FP32| / range = ${relative}, top-1 differs in rows ${flipped.join(", ") || "none"}`);
        return `max |GPU FP16 - CPU FP32| / range ${relative.toExponential(2)} (tolerance ${FP16_TOLERANCE})`;
      },
    },
  ];
  // A software adapter has no nvidia-smi, so no nv_gpu_* series.
  if (!software) {
    checks.push({
      name: "nv_gpu_* metrics carry the GPU's UUID",
      run: async () => {
        const text = await metrics();
        const missing = uuids.filter((uuid) => !["nv_gpu_utilization", "nv_gpu_memory_used_bytes", "nv_gpu_memory_total_bytes"].every((name) => text.includes(`${name}{gpu_uuid="${uuid}"}`)));
        if (missing.length > 0) throw new Error(`no nv_gpu_* series for ${missing.join(", ")}`);
        return uuids.join(", ");
      },
    });
  }

  let failed = 0;
  try {
    process.stdout.write(software
      ? "test:gpu on a software WebGPU adapter (--allow-software-gpu, no NVIDIA GPU): the nv_gpu_* metrics check needs an NVIDIA GPU\n"
      : `test:gpu on ${uuids.length} GPU(s): ${execFileSync("nvidia-smi", ["--query-gpu=name,driver_version", "--format=csv,noheader"], { encoding: "utf8" }).trim()}\n`);
    for (const check of checks) {
      try {
        process.stdout.write(`ok    ${check.name}: ${await check.run()}\n`);
      } catch (error) {
        failed++;
        process.stdout.write(`FAIL  ${check.name}: ${(error as Error).message}\n`);
      }
    }
    const placements = server.process.logs().split("\n").filter((line) => /version \d+: \d+ x KIND_/.test(line));
    process.stdout.write(`load log:\n${placements.map((line) => `  ${(JSON.parse(line) as { msg: string }).msg}`).join("\n")}\n`);
  } finally {
    await client.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
  process.stdout.write(`test:gpu: ${checks.length - failed} of ${checks.length} checks passed\n`);
  return failed === 0 ? 0 : 1;
}

main(parseOptions(process.argv.slice(2))).then((code) => (process.exitCode = code), (error: unknown) => {
  process.stderr.write(`test:gpu failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
