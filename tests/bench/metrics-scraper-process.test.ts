import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SCRAPER_READY_LINE, type ScraperReport } from "../../bench/metrics-scraper-process";
import { REPO_ROOT } from "../helpers/server-process";

const SCRAPER = path.join(REPO_ROOT, "dist", "bench", "metrics-scraper-process.js");

describe("metrics-scraper-process", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it("scrapes once before it says ready, then every interval on one connection, and reports the scrapes after the first", async () => {
    const connections = new Set<unknown>();
    let requests = 0;
    const server = createServer((request, response) => {
      requests++;
      connections.add(request.socket);
      response.end("metric 1\n");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => new Promise((done) => {
      server.close(() => done());
      server.closeAllConnections();
    }));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;

    const child = spawn(process.execPath, [SCRAPER, url, "50"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = once(child, "exit");
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    while (!output.includes("\n")) await once(child.stdout, "data");
    expect(output).toBe(`${SCRAPER_READY_LINE}\n`);
    expect(requests).toBe(1);

    while (requests < 4) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill("SIGTERM");
    await exited;
    const report = JSON.parse(output.slice(SCRAPER_READY_LINE.length + 1)) as ScraperReport;
    // A scrape the signal cut short is not counted.
    expect(report.scrapes).toBeGreaterThanOrEqual(2);
    expect(report.scrapes).toBeLessThanOrEqual(requests - 1);
    expect(report.slowestMs).toBeGreaterThan(0);
    // Spans on the clock this process shares: inside the time the scraper ran, one per counted scrape.
    expect(report.spans).toHaveLength(report.scrapes);
    const now = Number(process.hrtime.bigint());
    for (const [start, end] of report.spans) {
      expect(end).toBeGreaterThan(start);
      expect(end).toBeLessThanOrEqual(now);
    }
    expect(report.bytes).toBe("metric 1\n".length);
    expect(report.cpuMs).toBeGreaterThan(0);
    expect(connections.size).toBe(1);
  });
});
