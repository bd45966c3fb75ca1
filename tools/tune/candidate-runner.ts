import { InferenceServerError, type InferInput } from "../../client/index";
import { type ComparisonResult, loadLevels, type ProgressLine } from "../perf/index";
import type { CandidateRecord } from "./candidate-results";
import { CandidateLoadError, CandidateServer } from "./candidate-server";
import { compareServedConfigs } from "./compare-served-configs";
import { type MeasuredPoint, measureAtConcurrency } from "./measure-candidate";
import type { TuneOptions } from "./tune-options";
import { defaultConcurrency, describeSettings, type TunedSettings } from "./tuned-settings";

/** A figure of a progress or report line, with `digits` decimals. */
export function fixed(value: number, digits = 1): string {
  return value.toFixed(digits);
}

/** One measured point in a progress line. */
export function describePoint(point: MeasuredPoint): string {
  const stability = point.stable ? `stable after ${point.windows} windows` : `not stable after ${point.windows} windows`;
  return `concurrency ${point.concurrency}: ${fixed(point.throughput)} infer/s, p50 ${fixed(point.p50Ms, 2)} ms, p99 ${fixed(point.p99Ms, 2)} ms, batch ${fixed(point.avgBatchSize)} (${stability} of ${point.windowMs} ms)`;
}

/**
 * Serves candidate configurations of one model, each on a fresh server, and measures them as the options say,
 * reporting progress: a status line per window on a terminal, a line per measured candidate always.
 */
export class CandidateRunner {
  constructor(
    private readonly modelDirectory: string,
    private readonly options: TuneOptions,
    private readonly log: (line: string) => void,
    private readonly progress: ProgressLine,
  ) {}

  /** Rejects with {@link CandidateLoadError} when the configuration does not load. */
  start(configText: string, metrics = false): Promise<CandidateServer> {
    return CandidateServer.start(this.modelDirectory, configText, { modelName: this.options.modelName, protocol: this.options.protocol, metrics });
  }

  /** The load levels a candidate is measured at: `--concurrency-range`, or Model Analyzer's for its settings. */
  levels(settings: TunedSettings): number[] {
    const range = this.options.concurrencyRange;
    return range === undefined ? [defaultConcurrency(settings, this.options.maxConcurrency)] : [...loadLevels(range)];
  }

  /** Measures a running candidate at each load level; a failed request makes it a failed candidate. */
  async measure(id: string, settings: TunedSettings, server: CandidateServer, inputs: readonly InferInput[]): Promise<CandidateRecord> {
    const points: MeasuredPoint[] = [];
    const { measurement, verbose } = this.options;
    try {
      const send = server.sender(inputs);
      for (const concurrency of this.levels(settings)) {
        points.push(await measureAtConcurrency(send, server.readStatistics, concurrency, measurement, (trial, window, windowMs) => {
          const line = `[${id}] concurrency ${concurrency} · window ${trial}/${measurement.maxTrials} of ${windowMs} ms · ${fixed(window.throughput)} infer/s`;
          if (verbose) this.log(line);
          else this.progress.update(line);
        }));
      }
    } catch (error) {
      if (!(error instanceof InferenceServerError)) throw error;
      return this.#reported({ id, settings, points, failure: `a request failed: ${error.message}` });
    }
    return this.#reported({ id, settings, points, failure: undefined });
  }

  /** Starts, measures and stops a candidate; one that does not load is a failed candidate with the server's reason. */
  async run(id: string, settings: TunedSettings, configText: string, inputs: readonly InferInput[]): Promise<CandidateRecord> {
    let server: CandidateServer;
    try {
      server = await this.start(configText);
    } catch (error) {
      if (!(error instanceof CandidateLoadError)) throw error;
      return this.#reported({ id, settings, points: [], failure: `does not load: ${error.message}` });
    }
    try {
      return await this.measure(id, settings, server, inputs);
    } finally {
      await server.stop();
    }
  }

  /**
   * The pick against the starting configuration at the same load, each on its own server, alternating for
   * `--ab-rounds` rounds; each side's span opens and closes on a completion, so batches count whole.
   */
  async compareSideBySide(pickText: string, startText: string, concurrency: number, durationMs: number, inputs: readonly InferInput[]): Promise<ComparisonResult> {
    const { modelName, protocol, abRounds, measurement } = this.options;
    return compareServedConfigs({
      start: (text) => this.start(text), a: { label: "pick", configText: pickText }, b: { label: "start", configText: startText },
      inputs: () => inputs, concurrency, warmupMs: measurement.measurementIntervalMs, durationMs,
      name: modelName, setting: `concurrency ${concurrency}, ${protocol}`, rounds: abRounds,
      onRound: (round, r) => this.log(`A/B round ${round}: pick ${fixed(r.a.throughput)} infer/s (p99 ${fixed(r.a.p99Ms, 2)} ms), start ${fixed(r.b.throughput)} infer/s (p99 ${fixed(r.b.p99Ms, 2)} ms): ${r.ratio.toFixed(2)}`),
    });
  }

  #reported(record: CandidateRecord): CandidateRecord {
    if (record.failure !== undefined) this.log(`[${record.id}] ${describeSettings(record.settings)}: failed: ${record.failure}`);
    for (const point of record.points) this.log(`[${record.id}] ${describeSettings(record.settings)} @ ${describePoint(point)}`);
    return record;
  }
}
