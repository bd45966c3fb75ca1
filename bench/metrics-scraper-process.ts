import { Agent, get } from "node:http";

/** What the scraper prints on SIGTERM: scrapes after the first, the slowest of them, and its CPU time for them. */
export interface ScraperReport {
  readonly scrapes: number;
  readonly slowestMs: number;
  readonly cpuMs: number;
  /**
   * Each scrape's start and end (request to last byte), in `process.hrtime.bigint()` nanoseconds: the monotonic
   * clock every process on the machine shares, so a caller can tell which of its requests overlapped a scrape.
   */
  readonly spans: readonly (readonly [number, number])[];
  /** Bytes of the last scrape's body. */
  readonly bytes: number;
}

/** The line the scraper prints once its first scrape is done, before it starts scraping on its interval. */
export const SCRAPER_READY_LINE = "ready";

/**
 * Child process of `npm run bench`: scrapes a metrics URL every interval, as Prometheus does, from its own process
 * (scraping from the load generator's process slowed the load generator itself).
 *
 * It scrapes once as soon as it starts and prints {@link SCRAPER_READY_LINE}; the caller starts measuring after
 * that. A Prometheus has been running long before the requests it watches, while a fresh Node.js process spends
 * ~60 ms of CPU starting and, with fetch, another 100-180 ms on its first two scrapes (module loading, compilation;
 * measured 2026-11-25): inside the metrics-on side's 3 s window of a 2-core machine that the server and the load
 * generator share, that read as metrics costing 20-40% ("metrics on / off = 0.78"). Scrapes after the first go
 * through node:http on one keep-alive connection, as Prometheus keeps its connection: 1.5-2 ms of CPU each.
 * On SIGTERM it prints a {@link ScraperReport} of the scrapes after the first, as one JSON line.
 */
async function main(): Promise<void> {
  const [url, interval] = process.argv.slice(2);
  if (url === undefined) throw new Error("usage: metrics-scraper-process <url> [interval-ms]");
  const intervalMs = Number(interval ?? 1000);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let bytes = 0;
  const scrape = (): Promise<void> => new Promise((resolve, reject) => {
    get(url, { agent }, (response) => {
      let received = 0;
      response.on("data", (chunk: Buffer) => (received += chunk.byteLength));
      response.once("end", () => {
        bytes = received;
        if (response.statusCode === 200) resolve();
        else reject(new Error(`HTTP ${response.statusCode}`));
      });
      response.once("error", reject);
    }).once("error", reject);
  });
  await scrape();
  const cpuAtReady = process.cpuUsage();
  const spans: [number, number][] = [];
  const timer = setInterval(() => {
    const start = process.hrtime.bigint();
    scrape().then(() => spans.push([Number(start), Number(process.hrtime.bigint())]), () => undefined);
  }, intervalMs);
  process.once("SIGTERM", () => {
    clearInterval(timer);
    const cpu = process.cpuUsage(cpuAtReady);
    const slowestMs = spans.reduce((slowest, [start, end]) => Math.max(slowest, (end - start) / 1e6), 0);
    const report: ScraperReport = { scrapes: spans.length, slowestMs, cpuMs: (cpu.user + cpu.system) / 1000, spans, bytes };
    process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
  });
  process.stdout.write(`${SCRAPER_READY_LINE}\n`);
}

if (require.main === module) {
  void main().catch((error: unknown) => {
    process.stderr.write(`metrics-scraper-process: ${String(error)}\n`);
    process.exit(1);
  });
}
