import { spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "./server-process";

const PERF_MAIN = path.join(REPO_ROOT, "dist", "server", "perf", "main.js");

export interface PerfRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built `inference-perf` to completion and collects its output. */
export function runPerf(args: readonly string[], timeoutMs = 60_000): Promise<PerfRun> {
  const child = spawn(process.execPath, [PERF_MAIN, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`inference-perf did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
