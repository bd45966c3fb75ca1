import type { SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";

/** A short sweep of one side over a setting (a concurrency, a batch size) to find where it does best. */
export interface BestSettingSweep {
  /** What the log line says before the setting, e.g. `resnet50 sweep: server concurrency`. */
  readonly label: string;
  /** The chart series its points join. */
  readonly series: string;
  /** What its throughput counts; `infer/s` unless said. */
  readonly unit?: string;
  readonly settings: readonly number[];
  readonly measure: (setting: number) => Promise<SideMeasurement>;
}

/** The setting a sweep found best, and the throughput it measured there. */
export interface BestSetting {
  readonly setting: number;
  readonly throughput: number;
}

/** Measures each setting in turn, logging and charting it, and resolves with the one of the highest throughput. */
export async function sweepForBest(context: Pick<BenchContext, "log" | "chartPoints">, sweep: BestSettingSweep): Promise<BestSetting> {
  let best: BestSetting | undefined;
  for (const setting of sweep.settings) {
    const measured = await sweep.measure(setting);
    context.log(`${sweep.label} ${setting}: ${measured.throughput.toFixed(1)} ${sweep.unit ?? "infer/s"}`);
    context.chartPoints.push({ series: sweep.series, level: setting, ...measured });
    if (best === undefined || measured.throughput > best.throughput) best = { setting, throughput: measured.throughput };
  }
  if (best === undefined) throw new Error(`${sweep.label}: nothing to sweep`);
  return best;
}
