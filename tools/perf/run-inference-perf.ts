import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  InferenceClient, InferenceServerError, type ModelConfig, type ModelMetadata, type ModelStatistics, NotFoundError,
  type InferInput, ServerUnreachableError,
} from "../../client/index";
import { writeChartReport } from "./chart-report";
import { buildInputSets, readInputDataSource } from "./input-sets";
import { renderLatencyChart } from "./latency-chart";
import { type LoadSchedule, LoadGenerator, type RequestSender } from "./load-generator";
import { StreamRecorder, streamingSender } from "./streaming-sender";
import { loadLevels } from "./load-range";
import { formatComposingModelCsvs, formatPerfCsv } from "./perf-csv";
import { PerfError } from "./perf-error";
import { formatPerfJson } from "./perf-json";
import type { PerfOptions } from "./perf-options";
import type { PerfMeasurement } from "./perf-measurement";
import { describeEncoding, type PerfReport } from "./perf-report";
import { describeMachine, provenanceLines } from "./perf-report-header";
import { composingModelsTable, formatPerfTable, perfTable } from "./perf-table";
import { profileLoadLevel, type LoadLevelResult, type StatisticsReader } from "./profile-load-level";
import type { ModelSteps } from "./server-side-stats";
import { type ProgressStream, ProgressLine } from "./progress-line";

/** Follows the run as it goes (e.g. to serve its figures to Prometheus while it runs). */
export interface PerfObserver {
  loadLevelStarted(level: number): void;
  windowMeasured(window: PerfMeasurement): void;
}

/** Where the tool writes: results to stdout, progress, warnings and verbose windows to stderr. */
export interface PerfIo {
  readonly stdout: ProgressStream;
  readonly stderr: ProgressStream;
  readonly observer?: PerfObserver;
  /** The command line as typed, program name first, for the HTML report's header. */
  readonly argv?: readonly string[];
}

interface ModelUnderTest {
  readonly metadata: ModelMetadata;
  readonly config: ModelConfig;
  /** The model and, for an ensemble, the models its steps run: whose statistics the breakdown reads. */
  readonly steps: ModelSteps;
  readonly readStatistics: StatisticsReader;
  readonly server: { readonly name: string; readonly version: string };
}

/** The models an ensemble's configuration names in `ensemble_scheduling.step`, with its version unless -1. */
function stepsOf(config: ModelConfig): { name: string; version: string | undefined }[] {
  const steps = config.ensemble_scheduling?.["step"];
  if (!Array.isArray(steps)) return [];
  return steps.map((step: { model_name?: unknown; model_version?: unknown }) => {
    const version = Number(step.model_version ?? -1);
    return { name: String(step.model_name), version: version < 0 ? undefined : String(version) };
  });
}

/** Follows `ensemble_scheduling` down: each step's configuration tells whether it is an ensemble itself. */
async function ensembleSteps(control: InferenceClient, config: ModelConfig): Promise<ModelSteps[]> {
  return Promise.all(stepsOf(config).map(async (step) => {
    const stepConfig = await control.modelConfig(step.name, { version: step.version });
    return { ...step, steps: await ensembleSteps(control, stepConfig) };
  }));
}

function modelsOf(model: ModelSteps): ModelSteps[] {
  return [model, ...model.steps.flatMap(modelsOf)];
}

/** Turns the first contact's failures into the one-line answers a user needs. */
async function describeModel(control: InferenceClient, options: PerfOptions): Promise<ModelUnderTest> {
  const where = { version: options.modelVersion };
  try {
    const server = await control.serverMetadata();
    const [metadata, config] = await Promise.all([control.modelMetadata(options.modelName, where), control.modelConfig(options.modelName, where)]);
    const steps: ModelSteps = { name: options.modelName, version: options.modelVersion, steps: await ensembleSteps(control, config) };
    const models = modelsOf(steps);
    const readStatistics: StatisticsReader = server.extensions.includes("statistics")
      ? async () => (await Promise.all(models.map((model) => control.modelStatistics(model.name, { version: model.version })))).flat()
      : () => Promise.resolve<ModelStatistics[]>([]);
    return { metadata, config, steps, readStatistics, server: { name: server.name, version: server.version } };
  } catch (error) {
    if (error instanceof ServerUnreachableError) {
      throw new PerfError(`cannot reach an inference server at ${options.url} (${error.reason}); is it running, and is -u right?`);
    }
    if (error instanceof NotFoundError) {
      const version = options.modelVersion === undefined ? "" : ` version ${options.modelVersion}`;
      throw new PerfError(`model '${options.modelName}'${version} is not served by ${options.url}: ${error.message}`);
    }
    if (error instanceof InferenceServerError) throw new PerfError(`${options.url} refused to describe model '${options.modelName}': ${error.message}`);
    throw error;
  }
}

function checkBatchSize(model: ModelUnderTest, options: PerfOptions): void {
  const max = model.config.max_batch_size;
  if (model.config.model_transaction_policy?.decoupled === true && !options.streaming) {
    throw new PerfError(`model '${options.modelName}' is decoupled (many responses per request): measure it with --streaming`);
  }
  if (max === 0 && options.batchSize > 1) {
    throw new PerfError(`model '${options.modelName}' does not batch (max_batch_size 0), so -b must be 1`);
  }
  if (max > 0 && options.batchSize > max) {
    throw new PerfError(`-b ${options.batchSize} is larger than model '${options.modelName}''s max_batch_size ${max}`);
  }
}

function scheduleFor(options: PerfOptions, level: number): LoadSchedule {
  return options.load.kind === "concurrency"
    ? { kind: "concurrency", concurrency: level }
    : { kind: "request-rate", requestsPerSecond: level, distribution: options.load.distribution };
}

/**
 * Round-robin over the input sets (one per data-file entry), as perf_analyzer steps through its data. Every
 * request is encoded afresh, as a real client's would be, so "Client Send" is the true encoding cost.
 */
function senderFor(client: InferenceClient, inputSets: readonly (readonly InferInput[])[], options: PerfOptions, streams: StreamRecorder): RequestSender {
  let next = 0;
  if (options.streaming) {
    const senders = inputSets.map((inputs) => streamingSender(client, options.modelName, inputs, { modelVersion: options.modelVersion }, streams));
    return () => senders[next++ % senders.length]!();
  }
  return async () => {
    const inputs = inputSets[next++ % inputSets.length]!;
    const result = await client.infer(options.modelName, inputs, { modelVersion: options.modelVersion });
    return { sendNs: result.timing.sendNs, receiveNs: result.timing.receiveNs };
  };
}

async function warmUp(send: RequestSender, count: number, concurrency: number): Promise<void> {
  let remaining = count;
  const worker = async (): Promise<void> => {
    while (remaining-- > 0) await send();
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

function levelName(options: PerfOptions, level: number): string {
  return options.load.kind === "concurrency" ? `concurrency ${level}` : `request rate ${level}/s`;
}

async function writeOutputs(report: PerfReport, model: ModelUnderTest, options: PerfOptions, io: PerfIo): Promise<void> {
  const tableStream = options.jsonFile === "-" ? io.stderr : io.stdout;
  tableStream.write(formatPerfTable(report));
  if (options.csvFile !== undefined) {
    const csvFile = options.csvFile;
    await writeFile(csvFile, formatPerfCsv(report));
    // perf_analyzer's files for an ensemble's composing models: <name>_v<version>.<file name>, beside it.
    await Promise.all(formatComposingModelCsvs(report).map(({ fileNamePrefix, text }) =>
      writeFile(path.join(path.dirname(csvFile), fileNamePrefix + path.basename(csvFile)), text)));
  }
  if (options.jsonFile === "-") io.stdout.write(formatPerfJson(report));
  else if (options.jsonFile !== undefined) await writeFile(options.jsonFile, formatPerfJson(report));
  if (options.reportDir !== undefined) {
    const points = report.levels.map(({ level, result }) => {
      const percentiles = result.measurement.latency?.percentilesNs;
      const ms = (p: number): number => (percentiles?.get(p) ?? 0) / 1e6;
      return {
        series: `${report.modelName} (${report.protocol}, ${describeEncoding(report)})`, level,
        levelLabel: report.mode === "concurrency" ? `c${level}` : `${level}/s`, stable: result.stable,
        throughput: result.measurement.throughput, p50Ms: ms(50), p90Ms: ms(90), p99Ms: ms(99),
      };
    });
    const chart = await renderLatencyChart(points, `${report.modelName}: latency vs throughput`);
    const table = perfTable(report);
    const argv = io.argv ?? ["inference-perf"];
    await writeChartReport(options.reportDir, {
      title: `inference-perf: ${report.modelName}`,
      details: [
        ...provenanceLines({ date: new Date(), machine: describeMachine(), server: model.server, argv }),
        table.title,
        `stability: last 3 windows within ${report.stabilityPercentage}%${report.percentile === undefined ? "" : ` on p${report.percentile}`}`,
      ],
      chart,
      table,
      moreTables: [composingModelsTable(report)].filter((extra) => extra !== undefined),
    });
  }
}

/**
 * One load level: runs the load through perf_analyzer's stability loop, showing each window as progress (or a
 * line with -v), and warns when the windows never agreed.
 */
async function measureLevel(
  level: number, send: RequestSender, model: ModelUnderTest, options: PerfOptions, io: PerfIo, progress: ProgressLine,
): Promise<LoadLevelResult> {
  const name = levelName(options, level);
  const generator = new LoadGenerator(send, scheduleFor(options, level));
  io.observer?.loadLevelStarted(level);
  generator.start();
  let result: LoadLevelResult;
  try {
    result = await profileLoadLevel(generator, model.readStatistics, {
      measurementIntervalMs: options.measurementIntervalMs,
      stability: { stabilityPercentage: options.stabilityPercentage, windowCount: 3 },
      maxTrials: options.maxTrials,
      batchSize: options.batchSize,
      percentile: options.percentile,
      model: model.steps,
    }, (trial, window) => {
      io.observer?.windowMeasured(window);
      const p50 = window.latency?.percentilesNs.get(50);
      const line = `${name} · window ${trial}/${options.maxTrials} · ${window.throughput.toFixed(1)} infer/s · p50 ${p50 === undefined ? "-" : (p50 / 1e6).toFixed(2)} ms`;
      if (options.verbose) io.stderr.write(`${line}\n`);
      else progress.update(line);
    });
  } catch (error) {
    throw runError(error, name);
  } finally {
    await generator.stop();
    progress.clear();
  }
  if (result.measurement.requestCount === 0) {
    throw new PerfError(`no request completed at ${name} within ${options.measurementIntervalMs} ms windows; use a larger --measurement-interval`);
  }
  if (!result.stable) {
    io.stderr.write(`warning: ${name} did not stabilize within ${result.trials} windows (±${options.stabilityPercentage}%); reporting the last 3 windows. A longer --measurement-interval helps.\n`);
  }
  return result;
}

/**
 * Runs `inference-perf`: checks the server and model, builds the inputs, then for each load level runs the
 * load and perf_analyzer's stability loop, and finally writes the table, CSV, JSON and report asked for.
 * User-facing problems reject with {@link PerfError}; the clients it opens are closed either way.
 */
export async function runInferencePerf(options: PerfOptions, io: PerfIo): Promise<PerfReport> {
  const connection = { url: options.url, headers: options.headers, tls: options.tls };
  const client = new InferenceClient({ ...connection, inputFormat: options.inputTensorFormat, outputFormat: options.outputTensorFormat });
  // Statistics go over their own connections, so they never queue behind the load.
  const control = new InferenceClient(connection);
  const progress = new ProgressLine(io.stderr);
  try {
    const model = await describeModel(control, options);
    checkBatchSize(model, options);
    const inputSets = buildInputSets(model.metadata.inputs, {
      batchSize: options.batchSize, maxBatchSize: model.config.max_batch_size, shapes: options.shapes, source: await readInputDataSource(options.inputData),
    });
    const streams = new StreamRecorder();
    const send = senderFor(client, inputSets, options, streams);
    if (options.warmupRequestCount > 0) {
      progress.update(`warming up with ${options.warmupRequestCount} requests`);
      const concurrency = options.load.kind === "concurrency" ? options.load.range.start : 1;
      await warmUp(send, options.warmupRequestCount, concurrency).catch((error: unknown) => {
        throw runError(error, "warm-up");
      });
    }
    const levels: { level: number; result: LoadLevelResult }[] = [];
    for (const level of loadLevels(options.load.range)) {
      streams.reset();
      const result = await measureLevel(level, send, model, options, io, progress);
      levels.push({ level, result });
      if (options.streaming) io.stderr.write(`${streamingLine(levelName(options, level), streams, result.measurement.throughput)}\n`);
      const latencyMs = (result.measurement.stabilizingLatencyNs ?? 0) / 1e6;
      if (options.latencyThresholdMs !== undefined && latencyMs > options.latencyThresholdMs) break;
    }
    const report: PerfReport = {
      modelName: options.modelName, modelVersion: options.modelVersion, url: options.url, protocol: options.protocol,
      batchSize: options.batchSize, mode: options.load.kind, inputTensorFormat: options.inputTensorFormat,
      outputTensorFormat: options.outputTensorFormat, streaming: options.streaming, measurementIntervalMs: options.measurementIntervalMs,
      stabilityPercentage: options.stabilityPercentage, percentile: options.percentile, levels,
    };
    await writeOutputs(report, model, options, io);
    return report;
  } finally {
    progress.clear();
    await Promise.all([client.close(), control.close()]);
  }
}

/** What a streamed load level delivered: time to first response over the level's streams, and responses/s. */
function streamingLine(name: string, streams: StreamRecorder, streamsPerSecond: number): string {
  const { firstResponseMs, responsesPerStream } = streams.summary();
  const ms = (p: number): string => (firstResponseMs.get(p) ?? 0).toFixed(2);
  return `streaming at ${name}: time to first response p50 ${ms(50)} ms, p90 ${ms(90)} ms, p99 ${ms(99)} ms; ${responsesPerStream.toFixed(1)} responses per stream, ${(streamsPerSecond * responsesPerStream).toFixed(1)} responses/s`;
}

/** A failed request during the run, said in one line. */
function runError(error: unknown, during: string): Error {
  if (error instanceof ServerUnreachableError) return new PerfError(`lost the inference server during ${during}: ${error.message}`);
  if (error instanceof InferenceServerError) return new PerfError(`a request failed during ${during}: ${error.message}`);
  return error instanceof Error ? error : new Error(String(error));
}
