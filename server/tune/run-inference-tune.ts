import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { InferenceServerError, type InferInput, type ModelConfig } from "../client/index";
import { type ComparisonResult, runAbComparison } from "../perf/ab-comparison";
import { writeChartReport } from "../perf/chart-report";
import { buildInputSets } from "../perf/input-sets";
import { loadLevels } from "../perf/load-range";
import { PerfError } from "../perf/perf-error";
import { type ProgressStream, ProgressLine } from "../perf/progress-line";
import { formatTextTable } from "../perf/text-table";
import { measureThroughput } from "../perf/throughput-measurement";
import {
  type CandidateRecord, candidateScore, candidatesTable, describeCandidate, formatCandidatesCsv, type RatedPoint, ratePoints,
} from "./candidate-results";
import { CandidateLoadError, CandidateServer } from "./candidate-server";
import { confirmPick, type PickConfirmation } from "./confirm-pick";
import { type MeasuredPoint, measureAtConcurrency } from "./measure-candidate";
import { runSearch, type SearchMode } from "./run-search";
import { buildSearchSpaces } from "./search-space";
import { describeConstraints, type TuneConstraints } from "./tune-constraints";
import { renderTuneChart } from "./tune-chart";
import { TuneError } from "./tune-error";
import type { TuneOptions } from "./tune-options";
import { type ConfigChange, tunedConfigText, type TuneEditContext } from "./tuned-config-text";
import { defaultConcurrency, describeSettings, settingsKey, settingsOfConfig, type TunedSettings } from "./tuned-settings";

/** Where the tool writes: the results table to stdout; progress, one line per candidate, and warnings to stderr. */
export interface TuneIo {
  readonly stdout: ProgressStream;
  readonly stderr: ProgressStream;
}

export interface MachineDescription {
  readonly cpuModel: string;
  readonly cores: number;
}

/** What `summary.json` holds: the whole run, for scripts (the benchmark reads the pick from it). */
export interface TuneSummary {
  readonly model: string;
  readonly mode: SearchMode;
  readonly protocol: "http" | "grpc";
  readonly machine: MachineDescription & { readonly gpuCount: number };
  readonly constraints: TuneConstraints;
  readonly start: TunedSettings;
  readonly candidates: readonly CandidateRecord[];
  readonly pick: { readonly id: string; readonly settings: TunedSettings; readonly point: MeasuredPoint } | undefined;
  readonly abComparison: ComparisonResult | undefined;
  readonly confirmation: PickConfirmation | undefined;
  /** `tuned`: config.pbtxt holds the pick; `kept-start`: the starting config was best or the pick was not confirmed. */
  readonly outcome: "tuned" | "kept-start" | "nothing-met-constraints";
  readonly changes: readonly ConfigChange[];
  readonly notes: readonly string[];
  readonly files: { readonly config: string | undefined; readonly csv: string; readonly report: string; readonly chartPng: string };
}

function describeThisMachine(): MachineDescription {
  return { cpuModel: os.cpus()[0]?.model.trim() ?? "unknown CPU", cores: os.availableParallelism() };
}

/** Models whose load inference-tune cannot generate or whose scheduling it does not tune. */
function checkTunable(config: ModelConfig, modelName: string): void {
  if (config.platform === "ensemble" || config.ensemble_scheduling !== undefined) {
    throw new TuneError(`model '${modelName}' is an ensemble; tune each of its composing models instead`);
  }
  if (config.sequence_batching !== undefined) throw new TuneError(`model '${modelName}' is a sequence model; inference-tune drives request/response models`);
  if (config.model_transaction_policy?.decoupled === true) throw new TuneError(`model '${modelName}' is decoupled (many responses per request); inference-tune drives request/response models`);
}

function fixed(value: number, digits = 1): string {
  return value.toFixed(digits);
}

function pointLine(point: MeasuredPoint): string {
  const stability = point.stable ? `stable after ${point.windows} windows` : `not stable after ${point.windows} windows`;
  return `concurrency ${point.concurrency}: ${fixed(point.throughput)} infer/s, p50 ${fixed(point.p50Ms, 2)} ms, p99 ${fixed(point.p99Ms, 2)} ms, batch ${fixed(point.avgBatchSize)} (${stability} of ${point.windowMs} ms)`;
}

/**
 * Runs `inference-tune`: measures the starting configuration, searches the space (brute grid or quick walk) with
 * one server per candidate, picks the best measured point under the constraints, re-measures it side by side
 * against the starting configuration, and writes config.pbtxt, candidates.csv, summary.json and the HTML report.
 * User-facing problems reject with {@link TuneError}; every server it starts is stopped either way.
 */
export async function runInferenceTune(options: TuneOptions, io: TuneIo, machine: MachineDescription = describeThisMachine()): Promise<TuneSummary> {
  const progress = new ProgressLine(io.stderr);
  const log = (line: string): void => {
    progress.clear();
    io.stderr.write(`${line}\n`);
  };
  const { modelName } = options;
  const modelDirectory = path.join(options.modelRepository, modelName);
  if (!existsSync(modelDirectory) || !statSync(modelDirectory).isDirectory()) {
    throw new TuneError(`model '${modelName}' not found: ${modelDirectory} is not a folder`);
  }
  const configFile = path.join(modelDirectory, "config.pbtxt");
  const userText = existsSync(configFile) ? await readFile(configFile, "utf8") : "";
  await mkdir(path.join(options.outDir, "candidates"), { recursive: true });
  const levelsOf = (settings: TunedSettings): number[] =>
    options.concurrencyRange === undefined ? [defaultConcurrency(settings, options.maxConcurrency)] : [...loadLevels(options.concurrencyRange)];
  log(`inference-tune: ${modelName} from ${options.modelRepository}, ${options.mode} search over ${options.protocol}, ${machine.cores} cores (${machine.cpuModel}); constraints: ${describeConstraints(options.constraints)}`);

  const startServer = (text: string, metrics = false): Promise<CandidateServer> =>
    CandidateServer.start(modelDirectory, text, { modelName, protocol: options.protocol, metrics });

  /** Measures a running candidate at each load level; a failed request ends it as a failure. */
  const measureOn = async (id: string, settings: TunedSettings, server: CandidateServer, inputs: readonly InferInput[]): Promise<CandidateRecord> => {
    const points: MeasuredPoint[] = [];
    try {
      for (const concurrency of levelsOf(settings)) {
        points.push(await measureAtConcurrency(server.sender(inputs), server.readStatistics, concurrency, options.measurement, (trial, window, windowMs) => {
          const line = `[${id}] concurrency ${concurrency} · window ${trial}/${options.measurement.maxTrials} of ${windowMs} ms · ${fixed(window.throughput)} infer/s`;
          if (options.verbose) log(line);
          else progress.update(line);
        }));
      }
    } catch (error) {
      if (!(error instanceof InferenceServerError)) throw error;
      return { id, settings, points, failure: `a request failed: ${error.message}` };
    }
    return { id, settings, points, failure: undefined };
  };
  const report = (record: CandidateRecord): void => {
    if (record.failure !== undefined) log(`[${record.id}] ${describeSettings(record.settings)}: failed: ${record.failure}`);
    for (const point of record.points) log(`[${record.id}] ${describeSettings(record.settings)} @ ${pointLine(point)}`);
  };

  // The starting configuration: it tells the effective settings, the inputs, and whether the server sees a GPU.
  let first: CandidateServer;
  try {
    first = await startServer(userText, true);
  } catch (error) {
    if (error instanceof CandidateLoadError) throw new TuneError(`the starting configuration of '${modelName}' does not load: ${error.message}`);
    throw error;
  }
  let start: TunedSettings;
  let inputs: InferInput[];
  let startRecord: CandidateRecord;
  let gpuCount: number;
  try {
    const [config, metadata] = await Promise.all([first.control.modelConfig(modelName), first.control.modelMetadata(modelName)]);
    checkTunable(config, modelName);
    start = settingsOfConfig(config, machine.cores);
    try {
      inputs = buildInputSets(metadata.inputs, {
        batchSize: 1, maxBatchSize: config.max_batch_size, shapes: options.shapes,
        source: options.inputData === "zero" ? { kind: "zero" } : { kind: "random", seed: 1 },
      })[0]!;
    } catch (error) {
      if (error instanceof PerfError) throw new TuneError(error.message);
      throw error;
    }
    startRecord = await measureOn("start", start, first, inputs);
    gpuCount = await first.reportedGpuCount();
  } finally {
    await first.stop();
  }
  report(startRecord);
  if (startRecord.failure !== undefined) throw new TuneError(`the starting configuration of '${modelName}' failed under load: ${startRecord.failure}`);
  log(gpuCount > 0 ? `the server reports ${gpuCount} GPU(s): KIND_GPU candidates are searched too` : "the server reports no GPU: searching CPU settings");

  const editContext: TuneEditContext = { start, cores: machine.cores, modelName };
  const records: CandidateRecord[] = [startRecord];
  const scores = new Map([[settingsKey(start), candidateScore(startRecord, options.constraints)]]);
  const search = await runSearch({
    mode: options.mode,
    spaces: buildSearchSpaces(start, { cores: machine.cores, gpuCount }, options.lists),
    start,
    maxCandidates: options.maxCandidates,
  }, async (settings) => {
    const id = `c${records.length}`;
    const { text } = tunedConfigText(userText, settings, editContext, [`candidate ${id}: ${describeSettings(settings)}`]);
    await writeFile(path.join(options.outDir, "candidates", `${id}.pbtxt`), text);
    let record: CandidateRecord;
    try {
      const server = await startServer(text);
      try {
        record = await measureOn(id, settings, server, inputs);
      } finally {
        await server.stop();
      }
    } catch (error) {
      if (!(error instanceof CandidateLoadError)) throw error;
      record = { id, settings, points: [], failure: `does not load: ${error.message}` };
    }
    records.push(record);
    report(record);
    return candidateScore(record, options.constraints);
  }, scores);
  search.notes.forEach(log);

  /** The pick against the starting configuration at the pick's load, alternated, each on its own server. */
  const compareSideBySide = async (best: RatedPoint, startAt: readonly RatedPoint[], startText: string, requestInputs: readonly InferInput[]): Promise<ComparisonResult> => {
    const concurrency = best.point.concurrency;
    const durationMs = Math.max(best.point.windowMs, ...startAt.map((point) => point.point.windowMs));
    log(`re-measuring ${describeCandidate(best.candidate)} against the starting configuration at concurrency ${concurrency}: ${options.abRounds} alternating rounds of ${durationMs} ms`);
    const servers: CandidateServer[] = [];
    try {
      const pickText = tunedConfigText(startText, best.candidate.settings, editContext, []).text;
      const pickServer = await startServer(pickText);
      servers.push(pickServer);
      const startServerAb = await startServer(startText);
      servers.push(startServerAb);
      const side = (label: string, server: CandidateServer) => ({
        label,
        measure: () => measureThroughput(server.sender(requestInputs), { concurrency, warmupMs: options.measurement.measurementIntervalMs, durationMs }),
      });
      return await runAbComparison(modelName, `concurrency ${concurrency}, ${options.protocol}`, side("pick", pickServer), side("start", startServerAb), options.abRounds,
        (round, r) => log(`A/B round ${round}: pick ${fixed(r.a.throughput)} infer/s (p99 ${fixed(r.a.p99Ms, 2)} ms), start ${fixed(r.b.throughput)} infer/s (p99 ${fixed(r.b.p99Ms, 2)} ms): ${r.ratio.toFixed(2)}`));
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  };

  const rated = ratePoints(records, options.constraints);
  const pick = rated.pick;
  const startPoints = rated.points.filter((point) => point.candidate === startRecord);
  let abComparison: ComparisonResult | undefined;
  let confirmation: PickConfirmation | undefined;
  let header: string[];
  let outcome: TuneSummary["outcome"];
  const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const machineLine = `measured ${when} on ${machine.cpuModel}, ${machine.cores} cores, ${gpuCount} GPU(s) reported; ${options.mode} search, ${records.length} candidates (candidates.csv); constraints: ${describeConstraints(options.constraints)}`;
  if (pick === undefined) {
    outcome = "nothing-met-constraints";
    header = [];
  } else if (settingsKey(pick.candidate.settings) === settingsKey(start)) {
    outcome = "kept-start";
    header = [machineLine, `the starting configuration measured best: ${pointLine(pick.point)}`];
    log(`the starting configuration measured best (${describeSettings(start)})`);
  } else {
    const comparison = await compareSideBySide(pick, startPoints, userText, inputs);
    abComparison = comparison;
    confirmation = confirmPick(comparison, options.constraints);
    const abLine = `side by side at concurrency ${pick.point.concurrency} over ${options.protocol.toUpperCase()}, ${comparison.ratio.rounds} A/B rounds: ${fixed(confirmation.tuned.throughput)} infer/s (p99 ${fixed(confirmation.tuned.p99Ms, 2)} ms) vs ${fixed(confirmation.start.throughput)} infer/s (p99 ${fixed(confirmation.start.p99Ms, 2)} ms) for the starting config; ${confirmation.reason}`;
    outcome = confirmation.confirmed ? "tuned" : "kept-start";
    header = confirmation.confirmed
      ? [machineLine, `tuned: ${describeSettings(pick.candidate.settings)} (candidate ${pick.candidate.id})`, abLine]
      : [machineLine, `kept the starting configuration; best candidate ${describeCandidate(pick.candidate)}`, abLine];
    log(confirmation.confirmed ? `confirmed ${describeCandidate(pick.candidate)}: ${confirmation.reason}` : `kept the starting configuration: ${confirmation.reason}`);
  }

  const files = {
    config: outcome === "nothing-met-constraints" ? undefined : path.join(options.outDir, "config.pbtxt"),
    csv: path.join(options.outDir, "candidates.csv"),
    report: path.join(options.outDir, "index.html"),
    chartPng: path.join(options.outDir, "latency-vs-throughput.png"),
  };
  let changes: ConfigChange[] = [];
  if (files.config !== undefined) {
    const written = tunedConfigText(userText, outcome === "tuned" ? pick!.candidate.settings : start, editContext, header);
    changes = written.changes;
    await writeFile(files.config, written.text);
  }
  const summary: TuneSummary = {
    model: modelName, mode: options.mode, protocol: options.protocol, machine: { ...machine, gpuCount }, constraints: options.constraints,
    start, candidates: records, pick: pick === undefined ? undefined : { id: pick.candidate.id, settings: pick.candidate.settings, point: pick.point },
    abComparison, confirmation, outcome, changes, notes: search.notes, files,
  };
  await writeOutputs(summary, rated.points, header, options, io);
  if (outcome === "nothing-met-constraints") {
    const lowest = rated.points.reduce<RatedPoint | undefined>((a, p) => (a === undefined || p.p99Ms < a.p99Ms ? p : a), undefined);
    const closest = lowest === undefined ? "no candidate completed a request" : `the lowest p99 was ${fixed(lowest.p99Ms, 2)} ms at ${fixed(lowest.throughput)} infer/s (${describeCandidate(lowest.candidate)})`;
    throw new TuneError(`no configuration met the constraints (${describeConstraints(options.constraints)}): ${closest}; see ${files.report}`);
  }
  return summary;
}

/** candidates.csv, summary.json, the chart and the HTML report; then the table and the verdict on stdout. */
async function writeOutputs(summary: TuneSummary, rated: readonly RatedPoint[], header: readonly string[], options: TuneOptions, io: TuneIo): Promise<void> {
  await writeFile(summary.files.csv, formatCandidatesCsv(summary.candidates, rated));
  await writeFile(path.join(options.outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  const title = `inference-tune: ${summary.model}`;
  const chart = await renderTuneChart(rated, `${summary.model}: p99 latency vs throughput per candidate`, options.constraints.latencyBudgetMs);
  const table = candidatesTable(summary.candidates, rated);
  const verdict = summary.outcome === "nothing-met-constraints"
    ? `no candidate met the constraints (${describeConstraints(options.constraints)}); no config.pbtxt written`
    : summary.outcome === "tuned" ? `config.pbtxt holds ${describeSettings(summary.pick!.settings)}` : "config.pbtxt keeps the starting configuration";
  await writeChartReport(options.outDir, {
    title,
    details: [
      verdict,
      ...header,
      ...summary.changes.map((change) => `changed ${change.field}: ${change.from} -> ${change.to}`),
      `starting configuration: ${describeSettings(summary.start)}`,
      `windows: perf_analyzer's stability rule (last 3 windows within ${options.measurement.stabilityPercentage}%, at most ${options.measurement.maxTrials}), each at least ${options.measurement.measurementIntervalMs} ms and long enough for about 12 executions`,
      ...summary.notes,
    ],
    chart,
    table,
  });
  io.stdout.write(`${formatTextTable(table.header, table.rows)}\n${verdict}\n${summary.changes.map((c) => `  ${c.field}: ${c.from} -> ${c.to}\n`).join("")}`);
  io.stdout.write(`wrote ${[summary.files.config, summary.files.csv, summary.files.report].filter((f) => f !== undefined).join(", ")}\n`);
}
