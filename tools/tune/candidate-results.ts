import type { MeasuredPoint } from "./measure-candidate";
import { constraintMiss, paretoFront, pickBest, satisfiesConstraints, type TuneConstraints } from "./tune-constraints";
import { describeSettings, type TunedSettings } from "./tuned-settings";

/** One configuration tried: what it set, and what it measured (one point per load level), or why it failed. */
export interface CandidateRecord {
  /** `start` for the starting configuration, then `c1`, `c2`, ... in measurement order. */
  readonly id: string;
  readonly settings: TunedSettings;
  readonly points: readonly MeasuredPoint[];
  readonly failure: string | undefined;
}

/** A measured point with its place in the results. */
export interface RatedPoint {
  readonly candidate: CandidateRecord;
  readonly point: MeasuredPoint;
  readonly satisfies: boolean;
  readonly onParetoFront: boolean;
  readonly picked: boolean;
  /** Shortcuts for the constraint functions. */
  readonly throughput: number;
  readonly p99Ms: number;
}

/** Every measured point, marked with whether it meets the constraints, lies on the Pareto front, and is the pick. */
export function ratePoints(candidates: readonly CandidateRecord[], constraints: TuneConstraints): { points: RatedPoint[]; pick: RatedPoint | undefined } {
  const all = candidates.flatMap((candidate) => candidate.points.map((point) => ({ candidate, point, throughput: point.throughput, p99Ms: point.p99Ms })));
  const front = new Set(paretoFront(all));
  const pick = pickBest(all, constraints);
  const points = all.map((entry): RatedPoint => ({
    ...entry, satisfies: satisfiesConstraints(entry, constraints), onParetoFront: front.has(entry), picked: entry === pick,
  }));
  return { points, pick: points.find((point) => point.picked) };
}

/**
 * A candidate's objective for the search, higher is better: its best throughput that meets the constraints; else
 * how near its best point came to meeting them, as a number in (-1, 0) (so a walk with no passing point yet still
 * knows which way is nearer); -1 for a candidate that failed or served nothing.
 */
export function candidateScore(candidate: CandidateRecord, constraints: TuneConstraints): number {
  return Math.max(-1, ...candidate.points.map((point) => {
    if (satisfiesConstraints(point, constraints)) return point.throughput;
    const miss = constraintMiss(point, constraints);
    return Number.isFinite(miss) ? -miss / (1 + miss) : -1;
  }));
}

/** `start: 1 x CPU (2 threads), max batch 8, delay 0 us` */
export function describeCandidate(candidate: CandidateRecord): string {
  return `${candidate.id}: ${describeSettings(candidate.settings)}`;
}

const CSV_HEADER = [
  "Candidate", "Instance Kind", "GPU Accelerator", "Instance Count", "Intra-op Threads", "Max Batch Size", "Dynamic Batching",
  "Max Queue Delay (us)", "Preferred Batch Size", "Concurrency", "Inferences/Second", "p50 Latency (ms)", "p90 Latency (ms)",
  "p99 Latency (ms)", "Avg Latency (ms)", "Server Queue (us)", "Server Compute Input (us)", "Server Compute Infer (us)",
  "Server Compute Output (us)", "Avg Batch Size", "Stable", "Windows", "Window (ms)", "Satisfies Constraints", "Pareto Front",
  "Pick", "Error",
];

function csvCell(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Every candidate as CSV, one row per measured load level (a failed candidate gets one row with its error), in the
 * order they were measured. Latencies seen by the client in ms; the server's per-request times (statistics
 * extension) in µs, as perf_analyzer writes them.
 */
export function formatCandidatesCsv(candidates: readonly CandidateRecord[], rated: readonly RatedPoint[]): string {
  const lines = [CSV_HEADER.join(",")];
  for (const candidate of candidates) {
    const s = candidate.settings;
    const settingsCells = [
      candidate.id, s.device.kind, s.device.kind === "KIND_GPU" ? s.device.accelerator : "", String(s.instanceCount),
      s.intraOpThreads === undefined ? "" : String(s.intraOpThreads), String(s.maxBatchSize), s.dynamicBatching === undefined ? "no" : "yes",
      String(s.dynamicBatching?.maxQueueDelayUs ?? ""), s.dynamicBatching?.preferredBatchSizes.join(" ") ?? "",
    ];
    if (candidate.failure !== undefined) {
      lines.push([...settingsCells, ...Array.from({ length: CSV_HEADER.length - settingsCells.length - 1 }, () => ""), candidate.failure].map(csvCell).join(","));
      continue;
    }
    for (const entry of rated.filter((r) => r.candidate === candidate)) {
      const p = entry.point;
      const fixed = (value: number, digits: number): string => value.toFixed(digits);
      lines.push([
        ...settingsCells, String(p.concurrency), fixed(p.throughput, 2), fixed(p.p50Ms, 3), fixed(p.p90Ms, 3), fixed(p.p99Ms, 3),
        fixed(p.avgLatencyMs, 3), fixed(p.server.queueUs, 0), fixed(p.server.computeInputUs, 0), fixed(p.server.computeInferUs, 0),
        fixed(p.server.computeOutputUs, 0), fixed(p.avgBatchSize, 2), String(p.stable), String(p.windows), String(p.windowMs),
        String(entry.satisfies), String(entry.onParetoFront), String(entry.picked), "",
      ].map(csvCell).join(","));
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The table a person reads (terminal and HTML report): measured points by throughput, best first, then failures. */
export function candidatesTable(candidates: readonly CandidateRecord[], rated: readonly RatedPoint[]): { header: string[]; rows: string[][] } {
  const header = ["candidate", "configuration", "concurrency", "infer/s", "p50 ms", "p99 ms", "queue ms", "compute ms", "avg batch", "stable", "notes"];
  const rows = [...rated].sort((a, b) => b.throughput - a.throughput).map((entry) => {
    const p = entry.point;
    const notes = [entry.picked ? "pick" : "", entry.onParetoFront ? "Pareto front" : "", entry.satisfies ? "" : "misses constraints"].filter((n) => n !== "");
    return [
      entry.candidate.id, describeSettings(entry.candidate.settings), String(p.concurrency), p.throughput.toFixed(1), p.p50Ms.toFixed(2), p.p99Ms.toFixed(2),
      (p.server.queueUs / 1000).toFixed(2), ((p.server.computeInputUs + p.server.computeInferUs + p.server.computeOutputUs) / 1000).toFixed(2),
      p.avgBatchSize.toFixed(1), p.stable ? "yes" : "no", notes.join(", "),
    ];
  });
  for (const candidate of candidates.filter((c) => c.failure !== undefined)) {
    rows.push([candidate.id, describeSettings(candidate.settings), "", "", "", "", "", "", "", "", `failed: ${candidate.failure!}`]);
  }
  return { header, rows };
}
