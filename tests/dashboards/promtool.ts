import { spawnSync } from "node:child_process";

/** What a promtool run printed and how it exited. */
export interface PromtoolResult {
  readonly exitCode: number;
  /** stdout and stderr together: promtool reports failures on either. */
  readonly output: string;
}

const PROMTOOL_TIMEOUT_MS = 30_000;

/**
 * Runs Debian's `promtool` (package `prometheus`, which `.ci/run` installs) with `args` in `cwd`. Throws when
 * promtool cannot be started at all, so a missing binary fails tests instead of passing them.
 */
export function runPromtool(args: readonly string[], cwd?: string): PromtoolResult {
  const result = spawnSync("promtool", args, { cwd, encoding: "utf8", timeout: PROMTOOL_TIMEOUT_MS });
  if (result.error) throw new Error(`cannot run promtool ${args.join(" ")}: ${result.error.message}`);
  return { exitCode: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}
