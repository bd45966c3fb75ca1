#!/usr/bin/env node
/** The `inference-perf` executable: parses flags, runs, and turns every failure into one line and an exit code. */
import { CommanderError } from "@commander-js/extra-typings";
import { InferenceServerError } from "../../client/index";
import { PerfError } from "./perf-error";
import { parsePerfOptions, type PerfOptions } from "./perf-options";
import { PrometheusResults } from "./prometheus-results";
import { runInferencePerf } from "./run-inference-perf";

async function main(argv: readonly string[]): Promise<number> {
  let options: PerfOptions;
  try {
    options = parsePerfOptions(argv);
  } catch (error) {
    // commander has already printed its message (or the help text).
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  let results: PrometheusResults | undefined;
  try {
    results = options.prometheusPort === undefined
      ? undefined
      : await PrometheusResults.start(
        { model: options.modelName, protocol: options.protocol, mode: options.load.kind },
        { port: options.prometheusPort, lingerMs: options.prometheusLingerMs },
      );
    const argv = ["inference-perf", ...process.argv.slice(2)];
    await runInferencePerf(options, { stdout: process.stdout, stderr: process.stderr, argv, ...(results === undefined ? {} : { observer: results }) });
    return 0;
  } catch (error) {
    const known = error instanceof PerfError || error instanceof InferenceServerError;
    process.stderr.write(`inference-perf: error: ${(error as Error).message}\n`);
    if (!known && options.verbose) process.stderr.write(`${(error as Error).stack ?? ""}\n`);
    return 1;
  } finally {
    await results?.finish();
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
