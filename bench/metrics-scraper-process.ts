/**
 * Child process of `npm run bench`: scrapes a metrics URL every interval, as Prometheus does, from its own process.
 * Scraping from the load generator's process slowed the load generator itself (a keep-alive connection and a
 * response stream beside the measured client's), so the server saw less load and "metrics on" read 0.78 of off.
 * On SIGTERM it prints how many scrapes it made and the slowest one, as one JSON line.
 */
async function main(): Promise<void> {
  const [url, interval] = process.argv.slice(2);
  if (url === undefined) throw new Error("usage: metrics-scraper-process <url> [interval-ms]");
  const intervalMs = Number(interval ?? 1000);
  let scrapes = 0;
  let slowestMs = 0;
  const scrape = async (): Promise<void> => {
    const start = performance.now();
    const response = await fetch(url);
    await response.text();
    scrapes++;
    slowestMs = Math.max(slowestMs, performance.now() - start);
  };
  const timer = setInterval(() => void scrape().catch(() => undefined), intervalMs);
  process.once("SIGTERM", () => {
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify({ scrapes, slowestMs })}\n`, () => process.exit(0));
  });
}

void main();
