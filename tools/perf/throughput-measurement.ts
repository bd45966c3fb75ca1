import { LoadGenerator, type RequestSender } from "./load-generator";
import { summarizeLatencies } from "./latency-summary";
import type { SideMeasurement } from "./ab-comparison";

export interface FixedLoad {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

/**
 * Throughput and latency of `send` at a fixed concurrency, after a warm-up that is thrown away.
 *
 * The measured span opens at a completion and closes at the first completion at least `durationMs` later, and
 * counts the completions in between (closing one excluded). A fixed window would count whole batches or none:
 * with a batching server at concurrency 8, eight requests finish together every ~400 ms, so a 5 s window holds
 * 12 or 13 batches, a +-8% step. Opening and closing on completions spans whole service cycles, as the
 * in-process baseline's span of whole runs does.
 */
/**
 * Completions per second over the span that opens at the first completion and closes at the first completion at
 * least `minSpanNs` later: the completions before the closing one, over the time between the two. Undefined
 * while no completion has closed the span yet.
 */
export function spanThroughput(completionsNs: readonly number[], minSpanNs: number): number | undefined {
  const opening = completionsNs[0];
  if (opening === undefined) return undefined;
  const closing = completionsNs.findIndex((t) => t >= opening + minSpanNs);
  if (closing <= 0) return undefined;
  return closing / ((completionsNs[closing]! - opening) / 1e9);
}

export async function measureThroughput(send: RequestSender, load: FixedLoad): Promise<SideMeasurement> {
  const completionsNs: number[] = [];
  const spanNs = load.durationMs * 1e6;
  let recording = false;
  let span: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const spanClosed = new Promise<void>((resolve, reject) => (span = { resolve, reject }));
  spanClosed.catch(() => undefined); // a failure during warm-up surfaces through measureWindow instead
  const timedSend: RequestSender = async () => {
    try {
      const timing = await send();
      const now = Number(process.hrtime.bigint());
      if (recording) {
        completionsNs.push(now);
        if (now >= completionsNs[0]! + spanNs) span?.resolve();
      }
      return timing;
    } catch (error) {
      span?.reject(error);
      throw error;
    }
  };
  const generator = new LoadGenerator(timedSend, { kind: "concurrency", concurrency: load.concurrency });
  generator.start();
  const limitMs = load.warmupMs + load.durationMs * 4 + 60_000;
  const limit = setTimeout(() => span?.reject(new Error(`the measured span did not close within ${limitMs} ms`)), limitMs);
  try {
    await generator.measureWindow(load.warmupMs);
    recording = true;
    await spanClosed;
    recording = false;
    const records = await generator.measureWindow(0);
    const throughput = spanThroughput(completionsNs, spanNs)!;
    const latency = summarizeLatencies(records.latenciesNs);
    const ms = (p: number): number => (latency.percentilesNs.get(p) ?? 0) / 1e6;
    return { throughput, p50Ms: ms(50), p90Ms: ms(90), p99Ms: ms(99) };
  } finally {
    clearTimeout(limit);
    await generator.stop();
  }
}
