import type { LatencyChartPoint } from "../tools/perf/index";
import type { BenchOptions } from "./bench-options";
import type { SystemSetup } from "./system-setup";

/** What every comparison suite gets: where the server is, how long to measure, where to log and chart. */
export interface BenchContext {
  readonly serverUrl: string;
  /** host:port of the server's gRPC endpoint. */
  readonly serverGrpcAddress: string;
  readonly repositoryRoot: string;
  readonly modelRepository: string;
  readonly options: BenchOptions;
  readonly setup: SystemSetup;
  /** Progress, one line per measurement, to stderr. */
  readonly log: (line: string) => void;
  /** Setup facts each suite adds for the printed header (threads, chosen settings). */
  readonly notes: string[];
  readonly chartPoints: LatencyChartPoint[];
}
