import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { SCRAPER_READY_LINE, type ScraperReport } from "./metrics-scraper-process";

/**
 * Scrapes `url` every `intervalMs` from a process of its own, as Prometheus does: scraping from the load generator's
 * process slowed the load generator (measured: the server's CPU per request rose 10-15% after a single in-process
 * scrape, but not after one from another process), which the ratio charged to metrics. Resolves once the scraper's
 * first scrape is done, so that neither its start-up nor the server's first scrape falls in the measured window.
 */
export async function startScraper(url: string, intervalMs: number): Promise<{ stop(): Promise<ScraperReport> }> {
  const child = spawn(process.execPath, [path.join(__dirname, "metrics-scraper-process.js"), url, String(intervalMs)], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  const exited = once(child, "exit");
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.startsWith(`${SCRAPER_READY_LINE}\n`)) resolve();
    });
    void exited.then(([code]) => reject(new Error(`the metrics scraper exited with code ${String(code)} before its first scrape`)));
  });
  return {
    async stop() {
      child.kill("SIGTERM");
      await exited;
      return JSON.parse(output.slice(SCRAPER_READY_LINE.length + 1)) as ScraperReport;
    },
  };
}
