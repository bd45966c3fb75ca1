#!/usr/bin/env node
/**
 * The `inference-tune` executable: parses flags, runs the search, and turns every failure into one line and an exit
 * code: 0 when config.pbtxt holds a configuration confirmed faster, 2 when it keeps the
 * starting one (it measured best, or the pick made no measurable difference), 1 on an error.
 */
import { CommanderError } from "@commander-js/extra-typings";
import { InferenceServerError } from "../../client/index";
import { runInferenceTune } from "./run-inference-tune";
import { TuneError } from "./tune-error";
import { parseTuneOptions, type TuneOptions } from "./tune-options";
import { exitCodeOf } from "./tune-summary";

async function main(argv: readonly string[]): Promise<number> {
  let options: TuneOptions;
  try {
    options = parseTuneOptions(argv);
  } catch (error) {
    // commander has already printed its message (or the help text).
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  try {
    const summary = await runInferenceTune(options, { stdout: process.stdout, stderr: process.stderr });
    return exitCodeOf(summary.outcome);
  } catch (error) {
    const known = error instanceof TuneError || error instanceof InferenceServerError;
    process.stderr.write(`inference-tune: error: ${(error as Error).message}\n`);
    if (!known && options.verbose) process.stderr.write(`${(error as Error).stack ?? ""}\n`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
