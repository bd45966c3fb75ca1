import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import { openRaw, type RawConnection } from "../helpers/raw-connection";
import { type RunningServer, startServer } from "../helpers/server-process";

/** Writes `text` one byte every `everyMs`, until it is sent or the connection closes. */
async function trickle(connection: RawConnection, text: string, everyMs: number): Promise<void> {
  for (const byte of text) {
    if (connection.socket.destroyed) return;
    connection.socket.write(byte);
    await sleep(everyMs);
  }
}

/** Half-sent requests of three kinds: headers cut short, a body cut short, and a chunk announced as 2^64 - 1 bytes. */
const HALF_SENT = [
  "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Le",
  "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"inputs\":[",
  "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nabc",
];

const simpleInputs = [0, 1].map((i) => ({ name: `INPUT${i}`, shape: [1, 16], data: new Int32Array(16).fill(i) }));

describe("slow clients over HTTP (--http-idle-timeout-ms, --http-header-timeout-ms, --http-request-timeout-ms)", () => {
  const IDLE_MS = 3000;
  // One server where only the idle timeout can end a half-sent request (its deadlines are the defaults, 10 s and
  // 60 s), one whose deadlines are shorter than the pauses of a client that trickles.
  let server: RunningServer;
  let deadlineServer: RunningServer;
  beforeAll(async () => {
    [server, deadlineServer] = await Promise.all([
      startServer({ args: ["--http-idle-timeout-ms", String(IDLE_MS)] }),
      startServer({ args: ["--http-idle-timeout-ms", String(IDLE_MS), "--http-header-timeout-ms", "2000", "--http-request-timeout-ms", "2500"] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), deadlineServer?.stop()]);
  });

  it("serves other clients while 1,000 half-sent requests are open, then closes each of those within the idle timeout", async () => {
    const port = server.httpPort!;
    const slow = await Promise.all(Array.from({ length: 1000 }, async (_, i) => {
      const connection = await openRaw(port, HALF_SENT[i % HALF_SENT.length]);
      return { connection, sentAt: performance.now() };
    }));
    const client = new InferenceClient({ url: server.httpUrl, maxConnections: 4 });
    try {
      for (let i = 0; i < 20; i++) {
        expect(await client.isServerReady()).toBe(true);
        expect((await client.infer("simple", simpleInputs)).data("OUTPUT0", "INT32")).toEqual(new Int32Array(16).fill(1));
      }
    } finally {
      await client.close();
    }
    const servedAt = performance.now();
    const closedAt = await Promise.all(slow.map(({ connection }) => connection.closed));
    // Every other client was answered while all the slow connections were still open...
    expect(Math.min(...closedAt)).toBeGreaterThan(servedAt);
    // ...and each slow one was closed once it had been silent for the idle timeout (a loaded machine may add a little).
    const silentMs = slow.map(({ sentAt }, i) => closedAt[i]! - sentAt);
    expect(Math.min(...silentMs)).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(Math.max(...silentMs)).toBeLessThan(IDLE_MS + 2500);
    expect(slow.every(({ connection }) => connection.received() === "")).toBe(true);
    expect((await fetch(`${server.httpUrl}/v2/health/live`)).status).toBe(200);
  });

  it("answers 408 in Triton's shape to a client that trickles its headers or its body past their deadlines", async () => {
    const port = deadlineServer.httpPort!;
    const headers = await openRaw(port);
    const body = await openRaw(port, "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
    const started = performance.now();
    // A byte every 300 ms is never silent long enough for the idle timeout, so only the deadlines can stop them.
    void trickle(headers, `GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ${"s".repeat(100)}\r\n\r\n`, 300);
    void trickle(body, "x".repeat(1000), 300);
    const [headersClosed, bodyClosed] = await Promise.all([headers.closed, body.closed]);
    const expected = /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\n\r\n\{"error":"request not received in time: headers within 2000 ms \(--http-header-timeout-ms\), the whole request within 2500 ms \(--http-request-timeout-ms\)"\}$/;
    expect(headers.received()).toMatch(expected);
    expect(body.received()).toMatch(expected);
    expect(headersClosed - started).toBeGreaterThanOrEqual(1900);
    expect(headersClosed - started).toBeLessThan(2000 + 2000);
    expect(bodyClosed - started).toBeGreaterThanOrEqual(2400);
    expect(bodyClosed - started).toBeLessThan(2500 + 2000);
  });

  it("tells keep-alive clients the keep-alive time Google's load balancers need (more than their 600 s)", async () => {
    const headers = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      http.get(`${server.httpUrl}/v2/health/live`, { agent: new http.Agent({ keepAlive: true }) }, (response) => {
        response.resume();
        resolve(response.headers);
        response.socket.destroy();
      }).on("error", reject);
    });
    expect(headers["keep-alive"]).toBe("timeout=620");
  });

  it("answers a malformed request at once in Triton's shape", async () => {
    const connection = await openRaw(server.httpPort!, "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1FFFFFFFFFFFFFFFF\r\n");
    await connection.closed;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\n\{"error":"malformed HTTP request: [^"]+"\}$/);
  });
});

describe("connection limits over HTTP (--http-max-connections, --http-keepalive-timeout-ms)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--http-max-connections", "3", "--http-keepalive-timeout-ms", "300"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("closes connections beyond the limit as they arrive, and takes new ones once below it", async () => {
    const port = server.httpPort!;
    const held = await Promise.all([0, 1, 2].map(() => openRaw(port, "GET /v2/health/live HTTP/1.1\r\n")));
    const refused = await openRaw(port).catch(() => undefined);
    if (refused !== undefined) {
      refused.socket.write("GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n");
      await refused.closed;
      expect(refused.received()).toBe("");
    }
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await sleep(100); // the server sees the close
    const accepted = await openRaw(port, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await accepted.closed;
    expect(accepted.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    for (const connection of held) connection.socket.destroy();
  });

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    const connection = await openRaw(server.httpPort!, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n");
    while (!connection.received().includes("\r\n\r\n")) await sleep(10);
    const answeredAt = performance.now();
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // Node keeps the socket a second longer than it advertises, so that well-behaved clients close first.
    const idleMs = (await connection.closed) - answeredAt;
    expect(idleMs).toBeGreaterThanOrEqual(300);
    expect(idleMs).toBeLessThan(300 + 1000 + 1500);
  });
});
