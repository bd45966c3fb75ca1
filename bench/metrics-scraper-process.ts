import { Agent, get } from "node:http";

/** What the scraper prints on SIGTERM: scrapes after the first, the slowest of them, and its CPU time for them. */
export interface ScraperReport {
  readonly scrapes: number;
  readonly slowestMs: number;
  readonly cpuMs: number;
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
  const scrape = (): Promise<void> => new Promise((resolve, reject) => {
    get(url, { agent }, (response) => {
      response.on("data", () => undefined);
      response.once("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`))));
      response.once("error", reject);
    }).once("error", reject);
  });
  await scrape();
  const cpuAtReady = process.cpuUsage();
  let scrapes = 0;
  let slowestMs = 0;
  const timer = setInterval(() => {
    const start = performance.now();
    scrape().then(() => {
      scrapes++;
      slowestMs = Math.max(slowestMs, performance.now() - start);
    }, () => undefined);
  }, intervalMs);
  process.once("SIGTERM", () => {
    clearInterval(timer);
    const cpu = process.cpuUsage(cpuAtReady);
    const report: ScraperReport = { scrapes, slowestMs, cpuMs: (cpu.user + cpu.system) / 1000 };
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
