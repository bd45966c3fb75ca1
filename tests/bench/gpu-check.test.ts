import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { softwareGpuEnvironment } from "../helpers/software-gpu";
import { REPO_ROOT } from "../helpers/server-process";

const GPU_CHECK = path.join(REPO_ROOT, "dist", "bench", "gpu-check.js");
const SHARED_DATA = path.resolve(REPO_ROOT, "..", "shared", "data");

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `npm run test:gpu`'s compiled program with a PATH that holds Node alone, so that it never finds nvidia-smi. */
async function gpuCheck(args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [GPU_CHECK, ...args], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: path.dirname(process.execPath), ...env }, timeout: 300_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("npm run test:gpu (bench/gpu-check)", () => {
  const empty = mkdtempSync(path.join(os.tmpdir(), "gpu-check-no-data-"));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it("exits 2 naming the SqueezeNet it needs when the shared data is not where --shared-data says", async () => {
    const outcome = await gpuCheck(["--shared-data", empty]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`${path.join(empty, "models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx")} is missing`);
  });

  it("exits 2 without an NVIDIA GPU, and says how to check on a software adapter", async () => {
    const outcome = await gpuCheck(["--shared-data", SHARED_DATA]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain("no NVIDIA GPU found");
    expect(outcome.stderr).toContain("--allow-software-gpu");
  });

  it("passes every check but the NVIDIA metrics on the software WebGPU adapter, with --allow-software-gpu", async () => {
    const outcome = await gpuCheck(["--shared-data", SHARED_DATA, "--allow-software-gpu"], softwareGpuEnvironment());
    expect(outcome.stdout).toContain("test:gpu on a software WebGPU adapter");
    expect(outcome.stdout).toContain("ok    squeezenet on the GPU: mug.jpg is 504 COFFEE MUG");
    expect(outcome.stdout).toMatch(/resnet50_fp16_gpu' version 1: 1 x KIND_GPU on webgpu \(device 0, software adapter\)/);
    expect(outcome.stdout, outcome.stderr).toContain("test:gpu: 5 of 5 checks passed");
    expect(outcome.code).toBe(0);
  }, 320_000);
});
