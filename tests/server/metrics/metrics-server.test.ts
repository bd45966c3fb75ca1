import diagnosticsChannel from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import { type MetricsServer, type MetricsSource, startMetricsServer } from "../../../server/metrics/index";

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(source: MetricsSource): Promise<string> {
  const server = await startMetricsServer(source, { host: "127.0.0.1", port: 0 });
  servers.push(server);
  expect(server.address).toBe("127.0.0.1");
  return `http://127.0.0.1:${server.port}`;
}

const TEXT = "# HELP up_example An example.\n# TYPE up_example gauge\nup_example 1\n";
const source: MetricsSource = { contentType: "text/plain; version=0.0.4; charset=utf-8", exposition: () => Promise.resolve(TEXT) };

describe("startMetricsServer", () => {
  it("serves the exposition at GET /metrics with Prometheus' content type, query strings ignored", async () => {
    const url = await serve(source);
    for (const path of ["/metrics", "/metrics?name[]=up"]) {
      const response = await fetch(url + path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(await response.text()).toBe(TEXT);
    }
    const head = await fetch(`${url}/metrics`, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), await head.text()]).toEqual([200, String(TEXT.length), ""]);
  });

  it("answers 404 off /metrics and 405 for other methods", async () => {
    const url = await serve(source);
    expect((await fetch(`${url}/`)).status).toBe(404);
    expect((await fetch(`${url}/v2/health/ready`)).status).toBe(404);
    const post = await fetch(`${url}/metrics`, { method: "POST", body: "x" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  it("answers 500 with the reason when the exposition fails", async () => {
    const url = await serve({ contentType: "text/plain", exposition: () => Promise.reject(new Error("collector broke")) });
    const response = await fetch(`${url}/metrics`);
    expect([response.status, await response.text()]).toEqual([500, "collector broke\n"]);
  });

  it("rejects when the port is taken, and frees the port on close", async () => {
    const first = await startMetricsServer(source, { host: "127.0.0.1", port: 0 });
    await expect(startMetricsServer(source, { host: "127.0.0.1", port: first.port })).rejects.toThrow(/EADDRINUSE/);
    await first.close();
    const again = await startMetricsServer(source, { host: "127.0.0.1", port: first.port });
    servers.push(again);
    expect(again.port).toBe(first.port);
  });

  it("parses and answers scrapes off the main thread, which only builds the text, once per scrape", async () => {
    // Node publishes every request a node:http server of this thread receives here; the inference endpoints'
    // JIT-compiled HTTP code stays as their own traffic shaped it only if scrapes never pass through it.
    const seenOnMainThread: unknown[] = [];
    const onRequest = (message: unknown): void => void seenOnMainThread.push(message);
    diagnosticsChannel.subscribe("http.server.request.start", onRequest);
    try {
      let built = 0;
      const url = await serve({ contentType: "text/plain", exposition: () => Promise.resolve(`built ${++built}\n`) });
      expect(await (await fetch(`${url}/metrics`)).text()).toBe("built 1\n");
      expect(await (await fetch(`${url}/metrics`)).text()).toBe("built 2\n");
      expect((await fetch(`${url}/other`)).status).toBe(404);
      expect(built).toBe(2);
      expect(seenOnMainThread).toEqual([]);
    } finally {
      diagnosticsChannel.unsubscribe("http.server.request.start", onRequest);
    }
  });
});
