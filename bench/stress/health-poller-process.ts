import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";

/**
 * Child process of stress scenario (i): polls `<url>/v2/health/live` every 10 ms on one connection of its own, from a
 * process of its own. Polled from the scenario's process, the latencies took in the scenario's own clients' work on
 * the same event loop (its gRPC client frames each 64 MiB request in one copy and joins each 64 MiB response in
 * another): measured on the same gRPC INT32 request, p99 51-145 ms polled in the client's process, 31-65 ms from
 * another. Prints `ready` once the first answer came; on SIGTERM it lets the poll in flight finish and prints every
 * latency (ms) as one JSON line.
 */
async function main(): Promise<void> {
  const [url] = process.argv.slice(2);
  if (url === undefined) throw new Error("usage: health-poller-process <url>");
  const pool = new Pool(url, { connections: 1 });
  const latenciesMs: number[] = [];
  let stopping = false;
  process.once("SIGTERM", () => (stopping = true));
  while (!stopping) {
    const start = performance.now();
    const response = await pool.request({ method: "GET", path: "/v2/health/live" });
    await response.body.dump();
    if (latenciesMs.push(performance.now() - start) === 1) process.stdout.write("ready\n");
    await sleep(10);
  }
  await pool.close();
  process.stdout.write(`${JSON.stringify(latenciesMs)}\n`, () => process.exit(0));
}

void main();
