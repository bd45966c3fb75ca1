import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ServiceDefinition, status } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GrpcMessageFraming } from "../../server/frontends/grpc/grpc-message-framing";
import { processMemory } from "../helpers/process-memory";
import { openRaw, type RawConnection } from "../helpers/raw-connection";
import { type RunningServer, startServer } from "../helpers/server-process";
import { GrpcTestClient, PROTO_DIRECTORY } from "./grpc-transport";

/** How long the `slow` identity model takes: longer than the request and write timeouts (1000 ms) under test. */
const SLOW_MODEL_MS = 1500;

const inference = loadSync(path.join(PROTO_DIRECTORY, "grpc_service.proto"), { keepCase: true, includeDirs: [PROTO_DIRECTORY] })[
  "inference.GRPCInferenceService"
] as ServiceDefinition;

/** A ModelInfer request for an identity model over UINT8[n], framed as gRPC sends it (flag, length, message). */
function framedRequest(model: string, bytes: number, id = ""): Buffer {
  const message = inference["ModelInfer"]!.requestSerialize({
    model_name: model, id, inputs: [{ name: "INPUT0", datatype: "UINT8", shape: [bytes] }], raw_input_contents: [Buffer.alloc(bytes, 7)],
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.byteLength, 1);
  return Buffer.concat([prefix, message]);
}

/** Identity models over UINT8[-1]: `bytes` answers at once, `slow` after SLOW_MODEL_MS. */
function writeIdentityModels(repository: string): void {
  for (const [name, delay] of [["bytes", 0], ["slow", SLOW_MODEL_MS]] as const) {
    mkdirSync(path.join(repository, name, "1"), { recursive: true });
    writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_UINT8 dims: [ -1 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${delay}" } } ]
instance_group [ { count: 4 kind: KIND_CPU } ]`);
  }
}

/** One call over a raw HTTP/2 stream, which lets a test send part of a request or never read the answer. */
interface RawCall {
  readonly stream: http2.ClientHttp2Stream;
  /** The call's grpc-status and grpc-message (from a trailers-only answer or the trailers). */
  readonly status: Promise<{ code: number; message: string }>;
  /** When the stream closed (performance.now()), and the RST_STREAM code it closed with (0 = NO_ERROR or none). */
  readonly closed: Promise<{ at: number; rstCode: number }>;
}

function openCall(session: http2.ClientHttp2Session, method: string, first?: Buffer): RawCall {
  const stream = session.request({ ":method": "POST", ":path": `/inference.GRPCInferenceService/${method}`, "content-type": "application/grpc", te: "trailers" });
  stream.on("error", () => undefined);
  if (first !== undefined) stream.write(first);
  const status = new Promise<{ code: number; message: string }>((resolve) => {
    const take = (headers: http2.IncomingHttpHeaders): void => {
      if (headers["grpc-status"] !== undefined) resolve({ code: Number(headers["grpc-status"]), message: decodeURIComponent(String(headers["grpc-message"] ?? "")) });
    };
    stream.on("response", take);
    stream.on("trailers", take);
  });
  const closed = new Promise<{ at: number; rstCode: number }>((resolve) => stream.on("close", () => resolve({ at: performance.now(), rstCode: stream.rstCode ?? 0 })));
  return { stream, status, closed };
}

function connected(address: string): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(`http://${address}`);
  session.on("error", () => undefined);
  return new Promise((resolve, reject) => {
    session.once("remoteSettings", () => resolve(session));
    session.once("close", () => reject(new Error("connection closed before its settings")));
  });
}

/** Resolves once `count` whole gRPC messages came on the stream (which must be flowing). */
function messagesReceived(stream: http2.ClientHttp2Stream, count: number): Promise<void> {
  const framing = new GrpcMessageFraming();
  let seen = 0;
  return new Promise((resolve) => {
    const onData = (chunk: Buffer): void => {
      seen += framing.take(chunk);
      if (seen >= count) {
        stream.off("data", onData);
        resolve();
      }
    };
    stream.on("data", onData);
  });
}

/** An HTTP/2 frame: 3-byte length, type, flags, stream id, payload. */
function h2Frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.byteLength, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

const HTTP2_MAGIC = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** A client's connection preface: the magic, then an empty SETTINGS frame. */
const HTTP2_PREFACE = Buffer.concat([HTTP2_MAGIC, h2Frame(4, 0, 0, Buffer.alloc(0))]).toString("latin1");

/**
 * Makes one ModelInfer call as a client that grants the largest HTTP/2 windows and then reads nothing from its socket
 * (so the server can push a whole answer into its socket). Resolves when the call is sent, with its connection.
 */
function callThenStopReading(port: number, request: Buffer): Promise<RawConnection> {
  const literal = (name: string, value: string): Buffer => Buffer.concat([Buffer.of(0, name.length), Buffer.from(name), Buffer.of(value.length), Buffer.from(value)]);
  // HPACK: :method POST and :scheme http from the static table, the rest as literals without indexing.
  const headers = Buffer.concat([
    Buffer.of(0x83, 0x86), literal(":path", "/inference.GRPCInferenceService/ModelInfer"), literal(":authority", "x"),
    literal("content-type", "application/grpc"), literal("te", "trailers"),
  ]);
  const largestWindow = 2 ** 31 - 1;
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(4, 0); // SETTINGS_INITIAL_WINDOW_SIZE
  settings.writeUInt32BE(largestWindow, 2);
  const windowUpdate = Buffer.alloc(4);
  windowUpdate.writeUInt32BE(largestWindow - 65_535, 0);
  const data: Buffer[] = [];
  for (let offset = 0; offset < request.byteLength; offset += 16_384) {
    data.push(h2Frame(0, offset + 16_384 >= request.byteLength ? 1 : 0, 1, request.subarray(offset, offset + 16_384)));
  }
  return openRaw(port).then((connection) => new Promise((resolve) => {
    connection.socket.write(Buffer.concat([
      HTTP2_MAGIC, h2Frame(4, 0, 0, settings), h2Frame(4, 1, 0, Buffer.alloc(0)), h2Frame(8, 0, 0, windowUpdate),
      h2Frame(1, 4, 1, headers), ...data,
    ]), () => {
      connection.socket.pause();
      resolve(connection);
    });
  }));
}

/** The identity models' repository, which the request-timeout and write-timeout servers share. */
let repository: string;
beforeAll(() => {
  repository = mkdtempSync(path.join(os.tmpdir(), "grpc-slow-clients-"));
  writeIdentityModels(repository);
});
afterAll(() => {
  rmSync(repository, { recursive: true, force: true });
});

describe("gRPC requests that do not arrive (--grpc-request-timeout-ms)", () => {
  const REQUEST_TIMEOUT_MS = 1000;
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ repository, services: ["grpc"], args: ["--allow-http", "false", "--grpc-request-timeout-ms", String(REQUEST_TIMEOUT_MS)] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers DEADLINE_EXCEEDED to 300 calls sent in part, within the timeout, while serving other calls meanwhile", async () => {
    const request = framedRequest("bytes", 4096);
    // Headers only; half a message; a whole message but never the end of the request (grpc-js waits for it).
    const parts = [undefined, request.subarray(0, request.byteLength / 2), request];
    const sessions = await Promise.all(Array.from({ length: 10 }, () => connected(server.grpcAddress!)));
    const openedAt = performance.now();
    const calls = Array.from({ length: 300 }, (_, i) => openCall(sessions[i % sessions.length]!, "ModelInfer", parts[i % parts.length]));
    for (const call of calls) call.stream.resume();
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      for (let i = 0; i < 10; i++) {
        const response = await client.unary<{ raw_output_contents: Buffer[] }>("ModelInfer", {
          model_name: "bytes", inputs: [{ name: "INPUT0", datatype: "UINT8", shape: [3] }], raw_input_contents: [Buffer.from([i, 2, 3])],
        });
        expect([...response.raw_output_contents[0]!]).toEqual([i, 2, 3]);
      }
    } finally {
      client.close();
    }
    const servedAt = performance.now();
    const answers = await Promise.all(calls.map(async (call) => ({ ...(await call.status), ...(await call.closed) })));
    for (const answer of answers) {
      expect(answer.code).toBe(status.DEADLINE_EXCEEDED);
      expect(answer.message).toBe(`request not received in time: the whole request within ${REQUEST_TIMEOUT_MS} ms (--grpc-request-timeout-ms)`);
      // Then RST_STREAM NO_ERROR: stop sending, the answer is complete.
      expect(answer.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    }
    const closedAfterMs = answers.map((answer) => answer.at - openedAt);
    expect(Math.min(...answers.map((answer) => answer.at))).toBeGreaterThan(servedAt);
    expect(Math.min(...closedAfterMs)).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(Math.max(...closedAfterMs)).toBeLessThan(REQUEST_TIMEOUT_MS + 2000);
    for (const session of sessions) session.close();
  });

  it("never times out a call the server works on, however long the model takes", async () => {
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      const started = performance.now();
      const response = await client.unary<{ raw_output_contents: Buffer[] }>("ModelInfer", {
        model_name: "slow", inputs: [{ name: "INPUT0", datatype: "UINT8", shape: [2] }], raw_input_contents: [Buffer.from([4, 5])],
      });
      expect([...response.raw_output_contents[0]!]).toEqual([4, 5]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_MODEL_MS - 50);
    } finally {
      client.close();
    }
  });

  it("keeps a ModelStreamInfer stream open between requests, and resets it when a request stops part-way", async () => {
    const session = await connected(server.grpcAddress!);
    const call = openCall(session, "ModelStreamInfer");
    // A request the server works on for longer than the timeout, then a pause longer than the timeout.
    let answered = messagesReceived(call.stream, 1);
    call.stream.write(framedRequest("slow", 16, "first"));
    await answered;
    await sleep(REQUEST_TIMEOUT_MS + 200);
    answered = messagesReceived(call.stream, 1);
    call.stream.write(framedRequest("bytes", 16, "second"));
    await answered;
    const request = framedRequest("bytes", 1 << 16, "cut");
    call.stream.write(request.subarray(0, 1000));
    const sentAt = performance.now();
    const { at, rstCode } = await call.closed;
    // Its responses have begun, so no status can be sent any more.
    expect(rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
    expect(at - sentAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(at - sentAt).toBeLessThan(REQUEST_TIMEOUT_MS + 2000);
    session.close();
  });
});

describe("gRPC clients that never read their large responses (--grpc-write-timeout-ms)", () => {
  const WRITE_TIMEOUT_MS = 1000;
  const CLIENTS = 6;
  const WAVES = 4;
  const OUTPUT_BYTES = 8 << 20;
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ repository, services: ["grpc"], args: ["--allow-http", "false", "--grpc-write-timeout-ms", String(WRITE_TIMEOUT_MS)] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("resets each stalled call after the write timeout, which frees its response: memory stops growing wave after wave", async () => {
    const pid = server.process.pid!;
    const request = framedRequest("bytes", OUTPUT_BYTES);
    const sessions = await Promise.all(Array.from({ length: CLIENTS }, () => connected(server.grpcAddress!)));
    let peak = processMemory(pid).rssBytes;
    const sampler = setInterval(() => (peak = Math.max(peak, processMemory(pid).rssBytes)), 50);
    const peakAfterWave: number[] = [];
    try {
      for (let wave = 0; wave < WAVES; wave++) {
        // The streams are never read: their windows fill, and the rest of each response waits on the server.
        const calls = sessions.map((session) => openCall(session, "ModelInfer"));
        for (const call of calls) call.stream.end(request);
        const stalledAt = await Promise.all(calls.map((call) => new Promise<number>((resolve) => call.stream.once("response", () => resolve(performance.now())))));
        const closed = await Promise.all(calls.map((call) => call.closed));
        closed.forEach(({ at, rstCode }, i) => {
          expect(rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
          expect(at - stalledAt[i]!).toBeGreaterThanOrEqual(WRITE_TIMEOUT_MS - 50);
          expect(at - stalledAt[i]!).toBeLessThan(WRITE_TIMEOUT_MS + 2000);
        });
        peakAfterWave.push(Math.max(peak, processMemory(pid).rssBytes));
      }
    } finally {
      clearInterval(sampler);
    }
    // Held until their clients leave, each wave's unread calls would keep their requests and responses (measured
    // with --grpc-write-timeout-ms 0: ~3 x 8 MiB a call, +150 MiB a wave). Cut, the later waves reuse what the first
    // ones freed, give or take the garbage V8 lets pile up before it collects (measured: +0 to +85 MiB).
    const lastWavesGrowth = peakAfterWave[WAVES - 1]! - peakAfterWave[1]!;
    expect(lastWavesGrowth).toBeLessThan(CLIENTS * 3 * OUTPUT_BYTES);
    for (const session of sessions) session.close();
  });

  it("closes the connection of a client that reads nothing at all, once it answers no ping", async () => {
    // With the largest windows, the answer leaves its stream for the socket, where no stream timeout sees it.
    const connection = await callThenStopReading(server.grpcPort!, framedRequest("bytes", 4 << 20));
    // Quiet for the write timeout, then a ping left unanswered for the write timeout more: the server closes the
    // connection, which a client that reads nothing cannot see until it reads again.
    await sleep(2 * WRITE_TIMEOUT_MS + 1500);
    const resumedAt = performance.now();
    connection.socket.resume();
    const closedAt = await Promise.race([connection.closed, sleep(3000).then(() => Infinity)]);
    expect(closedAt - resumedAt).toBeLessThan(1000);
  });

  it("never cuts a client that reads slowly but steadily, nor a call the server works on for longer than the timeout", async () => {
    const session = await connected(server.grpcAddress!);
    const slowReader = openCall(session, "ModelInfer");
    slowReader.stream.end(framedRequest("bytes", 384 << 10));
    const started = performance.now();
    // Node's client grants a 64 KiB window, which it renews as it reads: the 384 KiB answer comes 16 KiB every 100 ms.
    slowReader.stream.on("data", () => {
      slowReader.stream.pause();
      setTimeout(() => slowReader.stream.resume(), 100);
    });
    const slowModel = openCall(session, "ModelInfer", framedRequest("slow", 16));
    slowModel.stream.end();
    slowModel.stream.resume();
    expect((await slowReader.status).code).toBe(status.OK);
    expect(performance.now() - started).toBeGreaterThan(WRITE_TIMEOUT_MS);
    expect((await slowModel.status).code).toBe(status.OK);
    expect((await slowModel.closed).rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    session.close();
  });
});

describe("gRPC connection limit (--grpc-max-connections)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ services: ["grpc"], args: ["--allow-http", "false", "--model-control-mode", "explicit", "--grpc-max-connections", "3"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("closes connections beyond the limit as they arrive, and takes new ones once below it", async () => {
    const held = await Promise.all([0, 1, 2].map(() => connected(server.grpcAddress!)));
    const refused = await openRaw(server.grpcPort!, HTTP2_PREFACE).catch(() => undefined);
    if (refused !== undefined) {
      await refused.closed;
      // Not even the server's SETTINGS: the connection was closed on accept.
      expect(refused.received()).toBe("");
    }
    const refusedClient = new GrpcTestClient(server.grpcAddress!);
    await expect(refusedClient.unary("ServerLive", {}, { deadline: Date.now() + 5000 })).rejects.toMatchObject({ code: status.UNAVAILABLE });
    refusedClient.close();
    held[0]!.close();
    await new Promise((resolve) => held[0]!.once("close", resolve));
    await sleep(100); // the server sees the close
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      expect(await client.unary("ServerLive", {})).toEqual({ live: true });
    } finally {
      client.close();
    }
    for (const session of held) session.close();
  });
});

describe("gRPC connection limits (--grpc-max-concurrent-streams, --grpc-max-connection-idle, --grpc-keepalive-*, --grpc-max-connection-age*)", () => {
  // Two servers: a short keepalive would also end a connection that got GOAWAY before its grace is up.
  let server: RunningServer;
  let agingServer: RunningServer;
  let port: number;
  beforeAll(async () => {
    [server, agingServer] = await Promise.all([
      startServer({
        services: ["grpc"],
        args: [
          "--allow-http", "false", "--grpc-max-concurrent-streams", "7", "--grpc-max-connection-idle", "1200",
          "--grpc-keepalive-time", "200", "--grpc-keepalive-timeout", "200",
        ],
      }),
      startServer({ services: ["grpc"], args: ["--allow-http", "false", "--grpc-max-connection-age", "1500", "--grpc-max-connection-age-grace", "500"] }),
    ]);
    port = server.grpcPort!;
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), agingServer?.stop()]);
  });

  it("announces the stream limit, and sends GOAWAY to a connection without calls after the idle time", async () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => undefined);
    const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
    expect(settings.maxConcurrentStreams).toBe(7);
    const opened = performance.now();
    await new Promise((resolve) => session.once("goaway", resolve));
    const idleMs = performance.now() - opened;
    expect(idleMs).toBeGreaterThanOrEqual(1100);
    expect(idleMs).toBeLessThan(2500);
    session.destroy();
  });

  it("closes a connection that does not answer keepalive pings, or says nothing at all", async () => {
    const started = performance.now();
    const [deaf, silent] = await Promise.all([openRaw(port, HTTP2_PREFACE), openRaw(port)]);
    const closedMs = (await Promise.all([deaf.closed, silent.closed])).map((at) => at - started);
    // A ping after 200 ms of silence, 200 ms to answer it: closed well before the 1200 ms idle limit.
    expect(Math.min(...closedMs)).toBeGreaterThanOrEqual(350);
    expect(Math.max(...closedMs)).toBeLessThan(1100);
  });

  it("sends GOAWAY to a busy connection at the maximum age, and cuts its open calls after the grace", async () => {
    const session = await connected(agingServer.grpcAddress!);
    const opened = performance.now();
    // An open ModelStreamInfer keeps the connection from ever being idle, and outlasts any grace.
    const call = openCall(session, "ModelStreamInfer");
    call.stream.resume();
    const streamClosed = call.closed.then(({ at }) => at);
    await new Promise((resolve) => session.once("goaway", resolve));
    const goawayAt = performance.now();
    // grpc-js spreads connection ages by ±10%.
    expect(goawayAt - opened).toBeGreaterThanOrEqual(1350 - 50);
    expect(goawayAt - opened).toBeLessThan(1650 + 1500);
    const graceMs = (await streamClosed) - goawayAt;
    expect(graceMs).toBeGreaterThanOrEqual(450);
    expect(graceMs).toBeLessThan(500 + 1500);
    session.destroy();
  });
});
