import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http, { type IncomingMessage } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";
import { type GrpcMessage, GrpcTestClient } from "./grpc-transport";

/**
 * A decoupled model that streams `count` responses of `size` bytes each (BLOB, BYTES [1], starting with the
 * response's index), in one of three ways chosen by the request parameter `mode`: `await` waits for each send
 * (flow control), `ignore` sends them all at once without waiting, `hold` sends one and then waits, without a
 * final flag, until the request is cancelled.
 */
const FLOOD_JS = String.raw`
"use strict";
const blob = (i, size) => ({ outputs: { BLOB: { datatype: "BYTES", shape: [1], data: [Buffer.from(String(i) + ":" + "x".repeat(size))] } } });
async function run(request) {
  const sender = request.responseSender;
  const { mode, count, size } = request.parameters;
  try {
    if (mode === "hold") {
      await sender.send(blob(0, size));
      while (!sender.isCancelled()) await new Promise((resolve) => setTimeout(resolve, 10));
      return;
    }
    for (let i = 0; i < count; i++) {
      if (mode === "await") await sender.send(blob(i, size));
      else sender.send(blob(i, size));
    }
    sender.send(undefined, { final: true });
  } catch (error) {
    if (!sender.isCancelled()) throw error;
  }
}
class Flood {
  execute(requests) {
    for (const request of requests) void run(request);
  }
}
module.exports = Flood;
`;

function writeFloodModel(repository: string): void {
  const dir = path.join(repository, "flood");
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), FLOOD_JS);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"', "max_batch_size: 0",
    'input [ { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    'output [ { name: "BLOB" data_type: TYPE_STRING dims: [ 1 ] } ]',
    "model_transaction_policy { decoupled: true }",
  ].join("\n"));
}

/** The least the server allows: the 64 responses a TypeScript model's send may run ahead of its client. */
const BACKLOG = 64;
/** Responses far beyond what loopback socket buffers hold: 2,000 of 16 KiB. */
const COUNT = 2000;
const SIZE = 16 * 1024;

/** A `/generate_stream` request whose response the test reads only when it chooses to (it stays paused until then). */
function openEventStream(httpUrl: string, parameters: Record<string, string | number>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${httpUrl}/v2/models/flood/generate_stream`, { method: "POST", headers: { "content-type": "application/json" } }, resolve);
    request.on("error", reject);
    request.end(JSON.stringify({ COUNT: 0, ...parameters }));
  });
}

/** Reads the rest of an event stream: each event's JSON. */
async function readEvents(response: IncomingMessage): Promise<Record<string, unknown>[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString().split("\n\n").filter((e) => e !== "").map((e) => JSON.parse(e.replace(/^data: /, "")) as Record<string, unknown>);
}

describe("streams with flow control: a client that reads slowly holds its model back, one that reads nothing cannot grow the server", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "stream-flow-"));
    writeFloodModel(repository);
    server = await startServer({
      repository, services: ["http", "grpc"],
      args: ["--max-stream-backlog", String(BACKLOG), "--model-control-mode", "explicit", "--load-model", "flood"],
    });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const failures = async (): Promise<number> => {
    const stats = await fetch(`${server.httpUrl}/v2/models/flood/stats`).then((r) => r.json()) as { model_stats: { inference_stats: { fail: { count: number } } }[] };
    return stats.model_stats[0]!.inference_stats.fail.count;
  };
  const failuresBeyond = (count: number): Promise<number> => waitFor(`a failed request beyond ${count}`, 60_000, async () => {
    const now = await failures();
    return now > count ? now : undefined;
  });
  const backlogError = `the client is not reading its responses: more than ${BACKLOG} wait to be written (--max-stream-backlog)`;

  it("generate_stream: a model that does not wait for its client fails UNAVAILABLE past the backlog; one that waits streams everything, in order", async () => {
    const before = await failures();
    // Opened first and not read until the other stream has failed: it is as far behind as that one was.
    const patient = await openEventStream(server.httpUrl, { mode: "await", count: COUNT, size: SIZE });
    const flooding = await openEventStream(server.httpUrl, { mode: "ignore", count: COUNT, size: SIZE });
    await failuresBeyond(before);

    const flooded = await readEvents(flooding);
    expect(flooded.length).toBeLessThan(COUNT);
    expect(flooded.at(-1)).toEqual({ error: backlogError });

    const events = await readEvents(patient);
    expect(events).toHaveLength(COUNT);
    expect(events.map((e) => String(e["BLOB"]).split(":")[0])).toEqual(Array.from({ length: COUNT }, (_, i) => String(i)));
    expect(await failures()).toBe(before + 1);
  });

  it("ModelStreamInfer: the same bound on a call whose client stops reading, told in the response's error_message", async () => {
    const before = await failures();
    const call = grpc.modelStreamInfer();
    const received: GrpcMessage[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on("end", resolve);
      call.on("error", reject);
    });
    call.pause();
    call.write({
      model_name: "flood", inputs: [{ name: "COUNT", datatype: "INT32", shape: ["1"], contents: { int_contents: [0] } }],
      parameters: { mode: { string_param: "ignore" }, count: { int64_param: String(COUNT) }, size: { int64_param: String(SIZE) } },
    });
    await failuresBeyond(before);
    call.on("data", (message: GrpcMessage) => received.push(message));
    call.resume();
    await waitFor("the stream's error response", 60_000, async () => (received.some((m) => m["error_message"] !== "") ? true : undefined));
    call.end();
    await ended;
    const errors = received.filter((m) => m["error_message"] !== "");
    expect(errors.map((m) => m["error_message"])).toEqual([backlogError]);
    expect(received.length).toBeLessThan(COUNT);
  });

  const closedError = "the model's instance was closed (model unloaded or server shutting down) before the stream's final response";

  it("unloading ends a stream the model never ends, with UNAVAILABLE, and the model loads again", async () => {
    const held = await openEventStream(server.httpUrl, { mode: "hold", count: 1, size: 1 });
    const unload = await fetch(`${server.httpUrl}/v2/repository/models/flood/unload`, { method: "POST" });
    expect(unload.status).toBe(200);
    const events = await readEvents(held);
    expect(events[0]!["BLOB"]).toBe("0:x");
    expect(events.at(-1)).toEqual({ error: closedError });
    await waitFor("flood to be unloaded", 60_000, async () => {
      const index = await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" }).then((r) => r.json()) as { name: string; state: string }[];
      return index.find((m) => m.name === "flood")?.state === "UNAVAILABLE" ? true : undefined;
    });
    expect((await fetch(`${server.httpUrl}/v2/repository/models/flood/load`, { method: "POST" })).status).toBe(200);
  });

  it("SIGTERM with a stream open that would never end: the stream ends UNAVAILABLE once --exit-timeout-secs passed, and the server exits", async () => {
    const stopping = await startServer({ repository, args: ["--exit-timeout-secs", "1"] });
    try {
      const held = await openEventStream(stopping.httpUrl, { mode: "hold", count: 1, size: 1 });
      const events = readEvents(held);
      expect(await stopping.stop()).toBe(1);
      expect((await events).at(-1)).toEqual({ error: "Server is shutting down: the exit timeout (1 s) passed before this request ended" });
    } finally {
      if (stopping.process.exitCode === null) stopping.process.kill("SIGKILL");
    }
  });
});
