import type { ComparisonResult } from "../perf/index";
import type { CandidateRecord } from "./candidate-results";
import type { PickConfirmation } from "./confirm-pick";
import type { MeasuredPoint } from "./measure-candidate";
import type { SearchMode } from "./run-search";
import type { TuneConstraints } from "./tune-constraints";
import type { ConfigChange } from "./tuned-config-text";
import type { TunedSettings } from "./tuned-settings";

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
  /** The starting configuration's effective settings. */
  readonly start: TunedSettings;
  /** Every candidate in measurement order, the starting configuration first. */
  readonly candidates: readonly CandidateRecord[];
  readonly pick: { readonly id: string; readonly settings: TunedSettings; readonly point: MeasuredPoint } | undefined;
  /** The side-by-side re-measurement, A = pick, B = start; absent when the start was the pick or nothing met the constraints. */
  readonly abComparison: ComparisonResult | undefined;
  readonly confirmation: PickConfirmation | undefined;
  /** `tuned`: config.pbtxt holds the pick; `kept-start`: the starting config was best or the pick was not confirmed. */
  readonly outcome: "tuned" | "kept-start" | "nothing-met-constraints";
  /** What config.pbtxt changed. */
  readonly changes: readonly ConfigChange[];
  /** How each search ended. */
  readonly notes: readonly string[];
  readonly files: { readonly config: string | undefined; readonly csv: string; readonly report: string; readonly chartPng: string };
}

/** Exit status when config.pbtxt keeps the starting configuration: a finished run, but nothing to change. */
export const KEPT_START_EXIT_CODE = 2;

/** The exit status of a finished run: 0 when config.pbtxt holds a configuration confirmed faster, else {@link KEPT_START_EXIT_CODE}. */
export function exitCodeOf(outcome: TuneSummary["outcome"]): number {
  return outcome === "tuned" ? 0 : KEPT_START_EXIT_CODE;
}
