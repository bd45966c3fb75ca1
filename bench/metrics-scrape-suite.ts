import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, type RequestSender, runAbComparison, summarizeRatios } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";
import { startScraper } from "./metrics-scraper";

/** Models in the repository whose /metrics is scraped: Triton-sized deployments hold this many. */
export const SCRAPED_MODELS = 200;
const SCRAPE_INTERVAL_MS = 1000;

/** A repository of `count` identity models (INT32 [16]), so that the server loads them in moments. */
function identityRepository(count: number): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-scrape-"));
  for (let i = 0; i < count; i++) {
    const dir = path.join(repository, `identity_${String(i).padStart(3, "0")}`);
    mkdirSync(path.join(dir, "1"), { recursive: true });
    writeFileSync(path.join(dir, "config.pbtxt"), [
      'backend: "identity"',
      'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]',
      'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]',
    ].join("\n"));
  }
  return repository;
}

/** Start and end (ns) of client operations. */
type Span = readonly [number, number];
const nowNs = (): number => Number(process.hrtime.bigint());

/**
 * Whether a scrape of a large repository stalls requests: one server with {@link SCRAPED_MODELS} models, requests
 * to one of them at `simpleConcurrency` while /metrics is scraped every second, against the same server not
 * scraped, alternated A/B. Besides the throughput ratio it notes how long a scrape took (client side: request to
 * the last byte of ~1 MB) and the latency of the requests that were in flight during a scrape against the median
 * of all, which is what a stall would show in.
 */
export async function runMetricsScrapeSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const repository = identityRepository(SCRAPED_MODELS);
  const server = await startInferenceServerProcess(repository, ["--allow-grpc", "false"], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  const metricsUrl = `${server.metricsUrl!}/metrics`;
  const inputs: InferInput[] = [{ name: "INPUT0", datatype: "INT32", shape: [16], data: Int32Array.from({ length: 16 }, (_, i) => i) }];
  const scrapes: Span[] = [];
  let scrapeBytes = 0;
  const duringScrape: number[] = [];
  const all: number[] = [];
  const measure = (scrape: boolean) => async () => {
    const prepared = preparedSender(client, "identity_000", inputs);
    const requests: Span[] = [];
    const send: RequestSender = async () => {
      const start = nowNs();
      const timing = await prepared();
      requests.push([start, nowNs()]);
      return timing;
    };
    // From a process of its own, as Prometheus scrapes (see metrics-scraper.ts); its spans are on this process's clock.
    const scraper = scrape ? await startScraper(metricsUrl, SCRAPE_INTERVAL_MS) : undefined;
    try {
      return await measureThroughput(send, { concurrency: options.simpleConcurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
    } finally {
      const report = await scraper?.stop();
      const ownScrapes = report?.spans ?? [];
      if (report !== undefined) scrapeBytes = report.bytes;
      scrapes.push(...ownScrapes);
      for (const [start, end] of requests) {
        all.push(end - start);
        if (ownScrapes.some(([s, e]) => start < e && end > s)) duringScrape.push(end - start);
      }
    }
  };
  try {
    const result = await runAbComparison(
      `${SCRAPED_MODELS} models: requests while /metrics is scraped / not scraped`, `identity INT32 [16], concurrency ${options.simpleConcurrency}, scraped every ${SCRAPE_INTERVAL_MS} ms`,
      { label: "scraped", measure: measure(true) }, { label: "not scraped", measure: measure(false) },
      options.rounds,
      (round, r) => log(`scrape round ${round}: scraped ${r.a.throughput.toFixed(0)} (p99 ${r.a.p99Ms.toFixed(2)} ms), not scraped ${r.b.throughput.toFixed(0)} req/s (p99 ${r.b.p99Ms.toFixed(2)} ms)`),
    );
    if (scrapes.length === 0) throw new Error("metrics-scrape: no scrape completed while measured");
    const ms = (ns: number): string => (ns / 1e6).toFixed(1);
    // summarizeRatios gives the median and range of any values, durations included.
    const scrapeNs = summarizeRatios(scrapes.map(([start, end]) => end - start));
    const requestNs = summarizeRatios(all);
    const overlapping = duringScrape.length > 0 ? summarizeRatios(duringScrape) : undefined;
    context.notes.push(
      `scrape: ${SCRAPED_MODELS} identity models loaded, ${scrapes.length} scrapes of ${(scrapeBytes / 1024).toFixed(0)} KiB (from a process of its own) took ${ms(scrapeNs.median)} ms median ` +
      `(${ms(scrapeNs.min)}-${ms(scrapeNs.max)}) request to last byte; requests in flight during a scrape: ${overlapping === undefined ? "none" : `${duringScrape.length}, ` +
      `latency median ${ms(overlapping.median)} ms, max ${ms(overlapping.max)} ms`}, against ${ms(requestNs.median)} ms median of all ${all.length}`,
    );
    return [result];
  } finally {
    await client.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}
