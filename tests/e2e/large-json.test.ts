import http from "node:http";
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processMemory } from "../helpers/process-memory";
import { type RunningServer, startServer } from "../helpers/server-process";
import { establishedConnections } from "../helpers/tcp-states";
import { waitFor } from "../helpers/wait-for";

interface Exchange {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly ms: number;
}

function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Exchange> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": body.byteLength, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks), ms: performance.now() - started }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * Sends `request` while polling /v2/health/live back to back; resolves with the request's answer and the slowest
 * health answer seen meanwhile.
 */
async function healthDuring(baseUrl: string, request: () => Promise<Exchange>): Promise<{ exchange: Exchange; slowestHealthMs: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const health = (): Promise<number> => new Promise((resolve, reject) => {
    const started = performance.now();
    http.get(`${baseUrl}/v2/health/live`, { agent }, (response) => {
      response.resume();
      response.on("end", () => resolve(performance.now() - started));
    }).on("error", reject);
  });
  await health();
  let done = false;
  let slowestHealthMs = 0;
  const polling = (async () => {
    while (!done) {
      slowestHealthMs = Math.max(slowestHealthMs, await health());
      await sleep(10);
    }
  })();
  const exchange = await request().finally(() => (done = true));
  await polling;
  agent.destroy();
  return { exchange, slowestHealthMs };
}

describe("large JSON tensors do not stop the server (issue 15, defect 8c)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--model-control-mode", "explicit", "--load-model", "identity_int64", "--load-model", "identity_fp32", "--load-model", "identity_bool"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers health checks while a 40 MB INT64 JSON request is decoded", async () => {
    const count = 5_000_000;
    const values = Array.from({ length: count }, (_, i) => 1_000_000 + (i % 8_999_999));
    const body = Buffer.from(JSON.stringify({
      inputs: [{ name: "INPUT0", datatype: "INT64", shape: [1, count], data: values }], parameters: { binary_data_output: true },
    }));
    const { exchange, slowestHealthMs } = await healthDuring(server.httpUrl, () => post(`${server.httpUrl}/v2/models/identity_int64/infer`, body));
    expect(exchange.status).toBe(200);
    const headerLength = Number(exchange.headers["inference-header-content-length"]);
    const output = new BigInt64Array(exchange.body.buffer.slice(exchange.body.byteOffset + headerLength, exchange.body.byteOffset + exchange.body.byteLength));
    expect(output.length).toBe(count);
    expect([output[0], output[count - 1]]).toEqual([BigInt(values[0]!), BigInt(values[count - 1]!)]);
    // Decoding took the main thread for most of the request before (seconds); now health answers all along.
    expect(slowestHealthMs).toBeLessThan(Math.max(250, exchange.ms / 4));
  });

  it("answers health checks while a 40 MB generate body is parsed and mapped (as /infer's, on a worker thread)", async () => {
    const count = 5_000_000;
    const values = Array.from({ length: count }, (_, i) => 1_000_000 + (i % 8_999_999));
    // The body's last key is a parameter the mapping refuses, so the answer is small and comes after all the work.
    const body = Buffer.from(JSON.stringify({ INPUT0: values, refused: { nested: true } }));
    const { exchange, slowestHealthMs } = await healthDuring(server.httpUrl, () => post(`${server.httpUrl}/v2/models/identity_int64/generate`, body));
    expect(exchange.status).toBe(400);
    expect(JSON.parse(exchange.body.toString())).toEqual({ error: "parameter 'refused' has invalid type. It should be either 'int', 'bool', or 'string'." });
    expect(slowestHealthMs).toBeLessThan(Math.max(250, exchange.ms / 4));
  });

  it("answers health checks while a 2M-element FP32 output is written as JSON, and the JSON is exact (gzip too)", async () => {
    const fp32Request = (count: number) => {
      const values = Float32Array.from({ length: count }, (_, i) => Math.fround(Math.sin(i) * 1000));
      const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, count], parameters: { binary_data_size: count * 4 } }] }));
      return { values, body: Buffer.concat([header, Buffer.from(values.buffer)]), headers: { "inference-header-content-length": String(header.byteLength) } };
    };
    const outputOf = (json: string): Buffer => {
      const parsed = JSON.parse(json) as { model_name: string; outputs: { shape: number[]; data: number[] }[] };
      expect(parsed.model_name).toBe("identity_fp32");
      return Buffer.from(Float32Array.from(parsed.outputs[0]!.data).buffer);
    };
    const large = fp32Request(2_000_000);
    const { exchange, slowestHealthMs } = await healthDuring(server.httpUrl, () => post(`${server.httpUrl}/v2/models/identity_fp32/infer`, large.body, large.headers));
    expect(exchange.status).toBe(200);
    expect(outputOf(exchange.body.toString()).equals(Buffer.from(large.values.buffer))).toBe(true);
    expect(slowestHealthMs).toBeLessThan(Math.max(250, exchange.ms / 4));

    const small = fp32Request(100_000);
    const gzipped = await post(`${server.httpUrl}/v2/models/identity_fp32/infer`, small.body, { ...small.headers, "accept-encoding": "gzip" });
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(outputOf(gunzipSync(gzipped.body).toString()).equals(Buffer.from(small.values.buffer))).toBe(true);
  });
});

describe("clients that never read their large responses (issue 15, defect 8c; --http-write-timeout-ms)", () => {
  const WRITE_TIMEOUT_MS = 1500;
  const CLIENTS = 12;
  const ELEMENTS = 4_000_000; // BOOL false: 4 MB as a tensor, 24 MB as JSON text
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--model-control-mode", "explicit", "--load-model", "identity_bool", "--http-write-timeout-ms", String(WRITE_TIMEOUT_MS)] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("keeps memory near the tensors' size, and closes each connection after the write timeout", async () => {
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BOOL", shape: [1, ELEMENTS], parameters: { binary_data_size: ELEMENTS } }] }));
    const tensor = Buffer.alloc(ELEMENTS, 0);
    const request = Buffer.concat([
      Buffer.from(`POST /v2/models/identity_bool/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: ${header.byteLength}\r\nContent-Length: ${header.byteLength + ELEMENTS}\r\n\r\n`),
      header, tensor,
    ]);
    const pid = server.process.pid!;
    const baseline = processMemory(pid).rssBytes;
    // Raw sockets that are never read from: the server's writes stall once the kernel buffers are full.
    const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => new Promise<Socket>((resolve, reject) => {
      const socket = connect(server.httpPort!, "127.0.0.1", () => socket.write(request, () => resolve(socket)));
      socket.on("error", reject);
    })));
    let peak = 0;
    for (let waited = 0; waited < WRITE_TIMEOUT_MS; waited += 100) {
      peak = Math.max(peak, processMemory(pid).rssBytes);
      await sleep(100);
    }
    // Formatted all at once, every response's JSON text (24 MB, twice while it becomes bytes) stays until its
    // client reads it (~40 MB a client, measured). Produced as the client reads, a response costs about its
    // request and output tensors (~16 MB a client, measured, allocator slack included).
    const jsonTextBytes = 6 * ELEMENTS;
    expect(peak - baseline).toBeLessThan(CLIENTS * jsonTextBytes);

    // The server closes each stalled connection once its write has waited the timeout; how soon that is depends on
    // how fast this machine decodes, executes and starts writing 12 large requests, so wait for it to happen.
    const serverEnds = sockets.map((socket) => `${server.httpPort}:${socket.localPort}`);
    await waitFor("the server to close every stalled connection", 150_000, async () => {
      const established = establishedConnections();
      return serverEnds.every((connection) => !established.has(connection)) ? true : undefined;
    });
    // A client that comes back finds its connection closed and its response cut short.
    const received = await Promise.all(sockets.map((socket) => new Promise<number>((resolve) => {
      let bytes = 0;
      socket.on("data", (chunk: Buffer) => (bytes += chunk.byteLength));
      socket.on("error", () => undefined);
      socket.on("close", () => resolve(bytes));
      socket.resume();
    })));
    for (const bytes of received) expect(bytes).toBeLessThan(jsonTextBytes);
    expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(200);
  }, 180_000);
});
