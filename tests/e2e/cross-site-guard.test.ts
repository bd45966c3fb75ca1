import { readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import { type RunningServer, startServer } from "../helpers/server-process";

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A POST with exactly these headers (fetch would not send a Host of our choosing). */
function post(port: number, path: string, headers: Record<string, string>, body = ""): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (response) => {
      let text = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk)).on("end", () => resolve({ status: response.statusCode!, body: text }));
    });
    request.on("error", reject).end(body);
  });
}

const REGION_KEY = `/xsite-guard-${process.pid}`;
const inputs = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) }));
const shmOutput = { name: "OUTPUT0", parameters: { shared_memory_region: "out", shared_memory_byte_size: 64, shared_memory_offset: 0 } };

/** Every API that changes the server, each as a browser on another site could send it (a text/plain "simple request"). */
const CHANGING_APIS: readonly { readonly name: string; readonly path: string; readonly body: string }[] = [
  { name: "model unload", path: "/v2/repository/models/simple/unload", body: "{}" },
  { name: "model load", path: "/v2/repository/models/simple/load", body: "{}" },
  { name: "logging", path: "/v2/logging", body: JSON.stringify({ log_verbose_level: 1 }) },
  { name: "trace setting", path: "/v2/trace/setting", body: JSON.stringify({ trace_rate: "1000" }) },
  { name: "model trace setting", path: "/v2/models/simple/trace/setting", body: JSON.stringify({ trace_rate: "1000" }) },
  { name: "shared memory register", path: "/v2/systemsharedmemory/region/evil/register", body: JSON.stringify({ key: REGION_KEY, offset: 0, byte_size: 64 }) },
  { name: "shared memory unregister", path: "/v2/systemsharedmemory/region/out/unregister", body: "" },
  { name: "shared memory unregister all", path: "/v2/systemsharedmemory/unregister", body: "" },
  { name: "infer into shared memory", path: "/v2/models/simple/infer", body: JSON.stringify({ inputs, outputs: [shmOutput] }) },
];

describe("APIs that change the server refuse what a browser on another site can send", () => {
  let server: RunningServer;
  let port: number;
  const registerOutputRegion = async (): Promise<void> => {
    expect((await post(port, "/v2/systemsharedmemory/region/out/register", {}, JSON.stringify({ key: REGION_KEY, offset: 0, byte_size: 64 }))).status).toBe(200);
  };
  const state = async (): Promise<unknown> => ({
    logging: await (await fetch(`${server.httpUrl}/v2/logging`)).json(),
    trace: await (await fetch(`${server.httpUrl}/v2/trace/setting`)).json(),
    modelTrace: await (await fetch(`${server.httpUrl}/v2/models/simple/trace/setting`)).json(),
    regions: await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/status`)).json(),
    ready: (await fetch(`${server.httpUrl}/v2/models/simple/ready`)).status,
  });

  beforeAll(async () => {
    writeFileSync(`/dev/shm${REGION_KEY}`, Buffer.alloc(0));
    truncateSync(`/dev/shm${REGION_KEY}`, 64);
    server = await startServer({
      args: ["--model-control-mode", "explicit", "--load-model", "simple", "--allow-client-shm", "true", "--http-allowed-host", "inference.internal"],
    });
    port = server.httpPort!;
    await registerOutputRegion();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(`/dev/shm${REGION_KEY}`, { force: true });
  });

  it("answers 403 to a foreign Origin with a text/plain body, and changes nothing", async () => {
    const before = await state();
    for (const api of CHANGING_APIS) {
      const answer = await post(port, api.path, { origin: "http://evil.example", "content-type": "text/plain" }, api.body);
      expect(answer.status, api.name).toBe(403);
      expect((JSON.parse(answer.body) as { error: string }).error, api.name)
        .toMatch(/^cross-origin request refused: Origin 'http:\/\/evil.example' is not this server's origin/);
    }
    expect(await state()).toEqual(before);
    expect(new Int32Array(new Uint8Array(readFileSync(`/dev/shm${REGION_KEY}`)).buffer)).toEqual(new Int32Array(16));
  });

  it("answers 403 to DNS rebinding: another site's name for this server, with its matching Origin", async () => {
    const before = await state();
    const host = `rebind.evil.example:${port}`;
    for (const api of CHANGING_APIS) {
      const answer = await post(port, api.path, { host, origin: `http://${host}`, "content-type": "application/json" }, api.body);
      expect(answer.status, api.name).toBe(403);
      expect((JSON.parse(answer.body) as { error: string }).error, api.name)
        .toBe(`request refused: Host '${host}' is not a name of this server (allowed: IP addresses, localhost, and --http-allowed-host), and this API changes the server`);
    }
    expect(await state()).toEqual(before);
  });

  it("answers 403 to what the browser marks as another site's (Sec-Fetch-Site), Origin or not", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const answer = await post(port, "/v2/logging", { "sec-fetch-site": site, "content-type": "text/plain" }, JSON.stringify({ log_verbose_level: 1 }));
      expect(answer.status).toBe(403);
      expect((JSON.parse(answer.body) as { error: string }).error).toMatch(/^cross-site request refused/);
    }
  });

  it("takes reads from anywhere: status, settings, and inference that writes no shared memory", async () => {
    const evil = { origin: "http://evil.example", "content-type": "text/plain" };
    expect((await post(port, "/v2/models/simple/infer", evil, JSON.stringify({ inputs }))).status).toBe(200);
    expect((await post(port, "/v2/repository/index", evil, "{}")).status).toBe(200);
  });

  it("takes every API from curl-like clients, same-origin pages, localhost and the names --http-allowed-host lists", async () => {
    for (const headers of <Record<string, string>[]>[
      {}, // curl, tritonclient.http: no Origin, no Content-Type
      { "content-type": "application/octet-stream" }, // tritonclient.http.aio
      { "content-type": "application/x-www-form-urlencoded" }, // curl -d, libcurl's default
      { "content-type": "text/plain;charset=UTF-8" }, // Node's fetch of a string body
      { origin: `http://127.0.0.1:${port}`, "content-type": "text/plain", "sec-fetch-site": "same-origin" }, // a page of this server itself
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: `inference.internal:${port}` },
      { host: `[::1]:${port}` },
    ]) {
      for (const api of CHANGING_APIS) {
        const answer = await post(port, api.path, headers, api.body);
        expect(answer.status, `${api.name} ${JSON.stringify(headers)}: ${answer.body}`).toBe(200);
        if (api.name === "shared memory unregister" || api.name === "shared memory unregister all") await registerOutputRegion();
      }
    }
  });

  it("takes our client's repository and logging calls", async () => {
    const client = new InferenceClient({ url: `http://localhost:${port}` });
    try {
      await client.unloadModel("simple");
      await client.loadModel("simple");
      expect((await client.updateLogSettings({ log_verbose_level: 0 })).log_verbose_level).toBe(0);
    } finally {
      client.close();
    }
  });
});
