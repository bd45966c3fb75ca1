#!/usr/bin/env node
/**
 * The `inference-optimize` executable: parses flags, makes the variants, measures and reports them; every failure
 * becomes one line and exit code 1 (2 for bad flags).
 */
import { CommanderError } from "@commander-js/extra-typings";
import { OptimizeError } from "./optimize-error";
import { parseOptimizeOptions, type OptimizeOptions } from "./optimize-options";
import { runInferenceOptimize } from "./run-inference-optimize";

async function main(argv: readonly string[]): Promise<number> {
  let options: OptimizeOptions;
  try {
    options = parseOptimizeOptions(argv);
  } catch (error) {
    // commander has already printed its message (or the help text).
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof OptimizeError) {
      process.stderr.write(`inference-optimize: error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  try {
    await runInferenceOptimize(options, { stdout: process.stdout, stderr: process.stderr });
    return 0;
  } catch (error) {
    process.stderr.write(`inference-optimize: error: ${(error as Error).message}\n`);
    if (!(error instanceof OptimizeError)) process.stderr.write(`${(error as Error).stack ?? ""}\n`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
