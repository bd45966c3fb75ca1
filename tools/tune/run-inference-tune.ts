import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { InferInput, ModelConfig } from "../../client/index";
import { buildInputSets, PerfError, ProgressLine, type ProgressStream, readInputDataSource } from "../perf/index";
import { type CandidateRecord, candidateScore, describeCandidate, type RatedPoint, ratePoints } from "./candidate-results";
import { CandidateRunner, describePoint, fixed } from "./candidate-runner";
import { CandidateLoadError, type CandidateServer } from "./candidate-server";
import { confirmPick } from "./confirm-pick";
import { runSearch } from "./run-search";
import { buildSearchSpaces } from "./search-space";
import { describeConstraints } from "./tune-constraints";
import { TuneError } from "./tune-error";
import type { TuneOptions } from "./tune-options";
import { writeTuneOutputs } from "./tune-outputs";
import type { MachineDescription, TuneSummary } from "./tune-summary";
import { tunedConfigText, type TuneEditContext } from "./tuned-config-text";
import { describeSettings, settingsKey, settingsOfConfig, type TunedSettings } from "./tuned-settings";

/** Where the tool writes: the results table to stdout; progress, one line per candidate, and warnings to stderr. */
export interface TuneIo {
  readonly stdout: ProgressStream;
  readonly stderr: ProgressStream;
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

/** What the starting configuration tells: its effective settings, the request inputs, the GPUs, and its measurement. */
interface StartingPoint {
  readonly settings: TunedSettings;
  readonly inputs: InferInput[];
  readonly gpuCount: number;
  readonly record: CandidateRecord;
}

async function measureStart(runner: CandidateRunner, userText: string, options: TuneOptions, cores: number): Promise<StartingPoint> {
  const { modelName } = options;
  let server: CandidateServer;
  try {
    server = await runner.start(userText, true);
  } catch (error) {
    if (error instanceof CandidateLoadError) throw new TuneError(`the starting configuration of '${modelName}' does not load: ${error.message}`);
    throw error;
  }
  try {
    const [config, metadata] = await Promise.all([server.control.modelConfig(modelName), server.control.modelMetadata(modelName)]);
    checkTunable(config, modelName);
    const settings = settingsOfConfig(config, cores);
    const source = await readInputDataSource(options.inputData);
    let inputs: InferInput[];
    try {
      inputs = buildInputSets(metadata.inputs, { batchSize: 1, maxBatchSize: config.max_batch_size, shapes: options.shapes, source })[0]!;
    } catch (error) {
      if (error instanceof PerfError) throw new TuneError(error.message);
      throw error;
    }
    const record = await runner.measure("start", settings, server, inputs);
    if (record.failure !== undefined) throw new TuneError(`the starting configuration of '${modelName}' failed under load: ${record.failure}`);
    // Read after the measurement: the server samples its GPUs in the background from its start.
    return { settings, inputs, gpuCount: await server.reportedGpuCount(), record };
  } finally {
    await server.stop();
  }
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
  const { modelName, constraints } = options;
  const modelDirectory = path.join(options.modelRepository, modelName);
  if (!existsSync(modelDirectory) || !statSync(modelDirectory).isDirectory()) {
    throw new TuneError(`model '${modelName}' not found: ${modelDirectory} is not a folder`);
  }
  const configFile = path.join(modelDirectory, "config.pbtxt");
  const userText = existsSync(configFile) ? await readFile(configFile, "utf8") : "";
  await mkdir(path.join(options.outDir, "candidates"), { recursive: true });
  log(`inference-tune: ${modelName} from ${options.modelRepository}, ${options.mode} search over ${options.protocol}, ${machine.cores} cores (${machine.cpuModel}); constraints: ${describeConstraints(constraints)}`);

  const runner = new CandidateRunner(modelDirectory, options, log, progress);
  const start = await measureStart(runner, userText, options, machine.cores);
  log(start.gpuCount > 0 ? `the server reports ${start.gpuCount} GPU(s): KIND_GPU candidates are searched too` : "the server reports no GPU: searching CPU settings");

  const editContext: TuneEditContext = { start: start.settings, cores: machine.cores, modelName };
  const records: CandidateRecord[] = [start.record];
  const search = await runSearch({
    mode: options.mode,
    spaces: buildSearchSpaces(start.settings, { cores: machine.cores, gpuCount: start.gpuCount }, options.lists),
    start: start.settings,
    maxCandidates: options.maxCandidates,
  }, async (settings) => {
    const id = `c${records.length}`;
    const { text } = tunedConfigText(userText, settings, editContext, [`candidate ${id}: ${describeSettings(settings)}`]);
    await writeFile(path.join(options.outDir, "candidates", `${id}.pbtxt`), text);
    const record = await runner.run(id, settings, text, start.inputs);
    records.push(record);
    return candidateScore(record, constraints);
  }, new Map([[settingsKey(start.settings), candidateScore(start.record, constraints)]]));
  search.notes.forEach(log);

  const rated = ratePoints(records, constraints);
  const pick = rated.pick;
  const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const machineLine = `measured ${when} on ${machine.cpuModel}, ${machine.cores} cores, ${start.gpuCount} GPU(s) reported; ${options.mode} search, ${records.length} candidates (candidates.csv); constraints: ${describeConstraints(constraints)}`;
  let verdict: Pick<TuneSummary, "outcome" | "abComparison" | "confirmation"> & { header: string[] };
  if (pick === undefined) {
    verdict = { outcome: "nothing-met-constraints", abComparison: undefined, confirmation: undefined, header: [] };
  } else if (settingsKey(pick.candidate.settings) === settingsKey(start.settings)) {
    log(`the starting configuration measured best (${describeSettings(start.settings)})`);
    verdict = {
      outcome: "kept-start", abComparison: undefined, confirmation: undefined,
      header: [machineLine, `the starting configuration measured best: ${describePoint(pick.point)}`],
    };
  } else {
    const concurrency = pick.point.concurrency;
    const startWindowsMs = rated.points.filter((point) => point.candidate === start.record).map((point) => point.point.windowMs);
    const durationMs = Math.max(pick.point.windowMs, ...startWindowsMs);
    log(`re-measuring ${describeCandidate(pick.candidate)} against the starting configuration, both at concurrency ${concurrency}: ${options.abRounds} alternating rounds of ${durationMs} ms`);
    const pickText = tunedConfigText(userText, pick.candidate.settings, editContext, []).text;
    const comparison = await runner.compareSideBySide(pickText, userText, concurrency, durationMs, start.inputs);
    const confirmation = confirmPick(comparison, constraints);
    const abLine = `side by side at concurrency ${concurrency} over ${options.protocol.toUpperCase()}, ${comparison.ratio.rounds} A/B rounds: ${fixed(confirmation.tuned.throughput)} infer/s (p99 ${fixed(confirmation.tuned.p99Ms, 2)} ms) vs ${fixed(confirmation.start.throughput)} infer/s (p99 ${fixed(confirmation.start.p99Ms, 2)} ms) for the starting config; ${confirmation.reason}`;
    log(confirmation.confirmed ? `confirmed ${describeCandidate(pick.candidate)}: ${confirmation.reason}` : `kept the starting configuration: ${confirmation.reason}`);
    log(confirmation.noise);
    verdict = {
      outcome: confirmation.confirmed ? "tuned" : "kept-start", abComparison: comparison, confirmation,
      header: confirmation.confirmed
        ? [machineLine, `tuned: ${describeSettings(pick.candidate.settings)} (candidate ${pick.candidate.id})`, abLine, confirmation.noise]
        : [machineLine, `kept the starting configuration; best candidate ${describeCandidate(pick.candidate)}`, abLine, confirmation.noise],
    };
  }

  const files = {
    config: verdict.outcome === "nothing-met-constraints" ? undefined : path.join(options.outDir, "config.pbtxt"),
    csv: path.join(options.outDir, "candidates.csv"),
    report: path.join(options.outDir, "index.html"),
    chartPng: path.join(options.outDir, "latency-vs-throughput.png"),
  };
  const written = files.config === undefined
    ? undefined
    : tunedConfigText(userText, verdict.outcome === "tuned" ? pick!.candidate.settings : start.settings, editContext, verdict.header);
  if (written !== undefined) await writeFile(files.config!, written.text);
  const summary: TuneSummary = {
    model: modelName, mode: options.mode, protocol: options.protocol, machine: { ...machine, gpuCount: start.gpuCount }, constraints,
    start: start.settings, candidates: records,
    pick: pick === undefined ? undefined : { id: pick.candidate.id, settings: pick.candidate.settings, point: pick.point },
    abComparison: verdict.abComparison, confirmation: verdict.confirmation, outcome: verdict.outcome,
    changes: written?.changes ?? [], notes: search.notes, files,
  };
  await writeTuneOutputs(summary, rated.points, verdict.header, options, io.stdout);
  if (verdict.outcome === "nothing-met-constraints") {
    const lowest = rated.points.reduce<RatedPoint | undefined>((a, p) => (a === undefined || p.p99Ms < a.p99Ms ? p : a), undefined);
    const closest = lowest === undefined ? "no candidate completed a request" : `the lowest p99 was ${fixed(lowest.p99Ms, 2)} ms at ${fixed(lowest.throughput)} infer/s (${describeCandidate(lowest.candidate)})`;
    throw new TuneError(`no configuration met the constraints (${describeConstraints(constraints)}): ${closest}; see ${files.report}`);
  }
  return summary;
}
