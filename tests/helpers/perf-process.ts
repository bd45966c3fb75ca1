import path from "node:path";
import { REPO_ROOT, runScriptToExit, type ScriptRun } from "./server-process";

const PERF_MAIN = path.join(REPO_ROOT, "dist", "tools", "perf", "main.js");

export type PerfRun = ScriptRun;

/** Runs the built `inference-perf` to completion and collects its output. */
export function runPerf(args: readonly string[], timeoutMs = 60_000): Promise<PerfRun> {
  return runScriptToExit(PERF_MAIN, args, timeoutMs);
}
