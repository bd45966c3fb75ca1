import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, runAbComparison } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";
import { startScraper } from "./metrics-scraper";
import { startQuietServerProcess } from "./quiet-server-process";

/** One side of a side-channel comparison: the server's extra flags, and whether /metrics is scraped while measured. */
interface SideChannelSide {
  readonly label: string;
  readonly flags: readonly string[];
  readonly scrape: boolean;
}

/**
 * A fresh server's first second under load is its JIT warming up: `simple` served ~6,000 req/s in a 1 s window
 * after 200 ms (the quick profile's warm-up) and ~13,000 after 1 s (2026-11-27, 2-core machine), so with the quick
 * warm-up both sides measured start-up more than the channel, and the metrics side also its endpoint thread's start.
 */
const FRESH_SERVER_WARMUP_MS = 1000;

interface SideChannelComparison {
  readonly name: string;
  /** Start both sides on a port the harness chose, ready once /v2/health/ready says so (servers that log nothing). */
  readonly quiet?: boolean;
  readonly a: SideChannelSide;
  readonly b: SideChannelSide;
}

/**
 * What the side channels cost on the hot path: `simple` over HTTP binary against servers that differ only in one
 * side channel's flags, alternated A/B, one comparison after the other. Metrics: on (scraped once a second
 * while measured from a process of its own, as a Prometheus would, more often than the usual 15 s to be pessimistic) against
 * `--allow-metrics false`. Tracing: configured at TIMESTAMPS with a trace file but a rate that samples nothing
 * in the run, against no trace setting. Metrics are off on both sides of the tracing comparison, so each ratio is
 * one channel's alone. Logging: the default (info, warning and error lines on, `--log-verbose 0`) against every line
 * off (`--log-info false --log-warning false --log-error false`); no server runs without its logger and the logging
 * extension, so that is as far as logging goes off. Those servers announce no port, so both sides of that
 * comparison start on a port chosen here.
 */
export async function runMetricsOverheadSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options } = context;
  const warmupMs = Math.max(options.warmupMs, FRESH_SERVER_WARMUP_MS);
  const traceDir = mkdtempSync(path.join(os.tmpdir(), "bench-trace-"));
  const metricsOff = ["--allow-metrics", "false"];
  const comparisons: SideChannelComparison[] = [
    {
      name: "simple: metrics on / off",
      a: { label: "metrics on", flags: [], scrape: true },
      b: { label: "metrics off", flags: metricsOff, scrape: false },
    },
    {
      name: "simple: tracing configured, not sampling / off",
      a: {
        label: "tracing not sampling",
        flags: [...metricsOff, "--trace-config", `triton,file=${path.join(traceDir, "trace.json")}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1000000000"],
        scrape: false,
      },
      b: { label: "tracing off", flags: metricsOff, scrape: false },
    },
    {
      name: "simple: logging default (verbose 0) / every line off",
      quiet: true,
      a: { label: "logging default", flags: [], scrape: false },
      b: { label: "logging off", flags: ["--log-info", "false", "--log-warning", "false", "--log-error", "false"], scrape: false },
    },
  ];
  context.notes.push(
    `side channels: simple at concurrency ${options.simpleConcurrency}, HTTP binary, a fresh server per side and round (warmed up ${warmupMs} ms), the two sides differing only in that channel's flags; ` +
    "metrics: /metrics scraped every second while measured, from a separate process; tracing: TIMESTAMPS with a trace file at rate 1e9 (samples nothing) against no setting; " +
    "logging: the default lines (verbose 0) against every line off, metrics off on both sides of tracing and logging",
  );
  const results: ComparisonResult[] = [];
  try {
    for (const comparison of comparisons) results.push(await runSideChannelComparison(context, comparison, warmupMs));
  } finally {
    rmSync(traceDir, { recursive: true, force: true });
  }
  return results;
}

/**
 * Every side of every round gets a fresh server: a tiny model such as `simple` runs on the main thread and moves to
 * a worker for good once preemption on a loaded machine stretches its runs past the inline budget; with one server
 * per side for the whole comparison, one such move decided every round's ratio.
 */
async function runSideChannelComparison(context: BenchContext, comparison: SideChannelComparison, warmupMs: number): Promise<ComparisonResult> {
  const { options, log } = context;
  const modelFlags = ["--model-control-mode", "explicit", "--load-model", "simple"];
  const start = async (side: SideChannelSide): Promise<{ httpUrl: string; metricsUrl?: string; stop(): Promise<void> }> => {
    if (comparison.quiet === true) return startQuietServerProcess(context.modelRepository, [...modelFlags, ...side.flags]);
    const server = await startInferenceServerProcess(context.modelRepository, ["--allow-grpc", "false", ...modelFlags, ...side.flags], context.options.serverRoot);
    return { httpUrl: server.httpUrl, metricsUrl: server.metricsUrl, stop: () => server.process.stop() };
  };
  const inputs: InferInput[] = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) }));
  const measure = (side: SideChannelSide) => async () => {
    const server = await start(side);
    const client = new InferenceClient({ url: server.httpUrl });
    const scraper = side.scrape ? await startScraper(`${server.metricsUrl!}/metrics`, 1000) : undefined;
    try {
      return await measureThroughput(preparedSender(client, "simple", inputs), { concurrency: options.simpleConcurrency, warmupMs, durationMs: options.windowMs });
    } finally {
      const scraped = await scraper?.stop();
      if (scraped !== undefined) {
        log(`${comparison.name}: ${side.label}: ${scraped.scrapes} scrapes, slowest ${scraped.slowestMs.toFixed(1)} ms, scraper CPU ${scraped.cpuMs.toFixed(1)} ms`);
      }
      await client.close();
      await server.stop();
    }
  };
  return runAbComparison(
    comparison.name, `concurrency ${options.simpleConcurrency}, binary`,
    { label: comparison.a.label, measure: measure(comparison.a) }, { label: comparison.b.label, measure: measure(comparison.b) },
    options.rounds,
    (round, r) => log(`${comparison.name} round ${round}: ${r.a.throughput.toFixed(0)} / ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
  );
}
