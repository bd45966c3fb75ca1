import type { ModelStatistics } from "../../client/index";
import { isStable, type StabilityCriteria } from "./is-stable";
import type { LoadGenerator, WindowRecords } from "./load-generator";
import { type PerfMeasurement, summarizeMeasurement } from "./perf-measurement";
import { mergeServerStats, type ModelSteps, type ServerSideStats, serverStatsDelta } from "./server-side-stats";

export interface ProfileSettings {
  /** `-p`: length of one measurement window. */
  readonly measurementIntervalMs: number;
  readonly stability: StabilityCriteria;
  /** `-r`: most windows before giving up on stability. */
  readonly maxTrials: number;
  readonly batchSize: number;
  /** `--percentile`: stabilize on this latency percentile instead of the average. */
  readonly percentile: number | undefined;
  /** Which entries of the statistics are the model's, and its ensemble steps; all of them when absent. */
  readonly model?: ModelSteps;
}

/** The result of one load level: the merged trailing windows, and whether they agreed. */
export interface LoadLevelResult {
  readonly stable: boolean;
  /** Windows measured. */
  readonly trials: number;
  readonly measurement: PerfMeasurement;
}

/** Reads the statistics extension for the profiled model (all its versions) and, for an ensemble, its steps. */
export type StatisticsReader = () => Promise<readonly ModelStatistics[]>;

/**
 * perf_analyzer's measurement loop for one load level, with the load already running: measure a window, read
 * the server's statistics before and after it, repeat until the last windows are stable or `maxTrials` windows
 * were measured. The result merges the last `stability.windowCount` windows either way.
 */
export async function profileLoadLevel(
  generator: LoadGenerator,
  readStatistics: StatisticsReader,
  settings: ProfileSettings,
  onWindow?: (trial: number, window: PerfMeasurement) => void,
): Promise<LoadLevelResult> {
  const windows: { records: WindowRecords; server: ServerSideStats; measurement: PerfMeasurement }[] = [];
  let before = await readStatistics();
  let stable = false;
  while (!stable && windows.length < settings.maxTrials) {
    const records = await generator.measureWindow(settings.measurementIntervalMs);
    const after = await readStatistics();
    const server = serverStatsDelta(before, after, settings.model);
    before = after;
    const measurement = summarizeMeasurement([records], server, settings.batchSize, settings.percentile);
    windows.push({ records, server, measurement });
    onWindow?.(windows.length, measurement);
    stable = isStable(windows.map((window) => window.measurement), settings.stability);
  }
  const merged = windows.slice(-settings.stability.windowCount);
  const server = merged.map((window) => window.server).reduce(mergeServerStats);
  return {
    stable,
    trials: windows.length,
    measurement: summarizeMeasurement(merged.map((window) => window.records), server, settings.batchSize, settings.percentile),
  };
}
