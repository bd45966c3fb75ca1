import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as connectHttp2 } from "node:http2";
import type { Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRaw, type RawConnection } from "../helpers/raw-connection";
import { type RunningServer, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";
import { grpcCallError, GrpcTestClient, streamResponses } from "./grpc-transport";

const BUDGET = 1 << 20;
/**
 * INT32 elements of one request: 240 KB of tensor, so that one fits the budget with the copies it costs once admitted
 * (the batch copy of its input, its output and, over gRPC, the response message: 960 KB in all) and two do not.
 */
const ELEMENTS = 60_000;
const refusal = /^requests in flight hold more than the server's budget of 1048576 bytes \(--max-inflight-request-bytes\); this request needs \d+: retry later$/;
const neverFits = /^request of at least \d+ bytes exceeds the server's in-flight budget of 1048576 bytes \(--max-inflight-request-bytes\)$/;

/** An identity model of INT32 [-1]. */
function writeIdentity(repository: string, name: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
`);
}

/** A binary-extension infer body of `elements` INT32 zeros, and its header's length. */
function binaryInferBody(elements: number): { body: Buffer; headerLength: number } {
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements], parameters: { binary_data_size: elements * 4 } }] }));
  return { body: Buffer.concat([header, Buffer.alloc(elements * 4)]), headerLength: header.byteLength };
}

function binaryInfer(url: string, model: string, elements: number): Promise<Response> {
  const { body, headerLength } = binaryInferBody(elements);
  return fetch(`${url}/v2/models/${model}/infer`, {
    method: "POST", body, headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(headerLength) },
  });
}

const grpcInfer = (model: string, elements: number): Record<string, unknown> =>
  ({ model_name: model, inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements] }], raw_input_contents: [Buffer.alloc(elements * 4)] });

/** A ModelInfer message of one small tensor whose `id` makes it `idBytes` long: only the message is large, no tensor. */
const grpcLongId = (idBytes: number): Record<string, unknown> =>
  ({ model_name: "fast", id: "a".repeat(idBytes), inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1], contents: { int_contents: [1] } }] });

const inferHead = (headers: string): string => `POST /v2/models/fast/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n${headers}\r\n`;

/** An HTTP/1.1 chunk of `bytes` zeros without its closing CRLF: the body has not ended. */
const chunkOf = (bytes: number): Buffer => Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), Buffer.alloc(bytes)]);

async function errorOf(answer: Response): Promise<string> {
  return ((await answer.json()) as { error: string }).error;
}

/** The status and `{"error"}` of the answer a raw connection got, once it has come whole. */
function answerOf(connection: RawConnection): Promise<{ status: number; error: string }> {
  return waitFor("the server's answer", 30_000, async () => {
    const text = connection.received();
    const bodyStart = text.indexOf("\r\n\r\n") + 4;
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text)?.[1];
    if (bodyStart < 4 || length === undefined || Buffer.byteLength(text.slice(bodyStart)) < Number(length)) return undefined;
    return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]), error: (JSON.parse(text.slice(bodyStart)) as { error: string }).error };
  });
}

describe("--max-inflight-request-bytes: a server-wide budget for bytes of requests in flight", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;
  /** Sends its messages gzip-compressed (grpc-js's CompressionAlgorithms.gzip). */
  let gzipGrpc: GrpcTestClient;
  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "budget-repo-"));
    writeIdentity(repository, "fast");
    // No idle timeout: the test's half-sent request must hold its bytes until the test lets it go.
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--max-inflight-request-bytes", String(BUDGET), "--http-idle-timeout-ms", "0"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
    gzipGrpc = new GrpcTestClient(server.grpcAddress!, { "grpc.default_compression_algorithm": 2 });
  });
  afterAll(async () => {
    grpc?.close();
    gzipGrpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("answers 503 over HTTP and RESOURCE_EXHAUSTED over gRPC while the budget is full, and takes requests again once it is not", async () => {
    // A request whose body is still coming holds what of it has arrived: here all but the last byte of a request
    // like the next one is left (a body refused part-way has its connection closed unread, which a client still
    // sending may see as a reset before its answer).
    const holder = await holdingBody("content-length", BUDGET - binaryInferBody(ELEMENTS).body.byteLength + 1);
    try {
      const http = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
      expect(http.status).toBe(503);
      expect(await errorOf(http)).toMatch(refusal);
      // gRPC messages a little larger than the body, whose refusal does not depend on framing bytes.
      const grpcError = await grpcCallError(grpc.unary("ModelInfer", grpcInfer("fast", ELEMENTS + 100)));
      expect(grpcError.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(grpcError.details).toMatch(refusal);
      // A ModelStreamInfer request gets it as its error response, and the stream goes on.
      const [streamed] = await streamResponses(grpc.modelStreamInfer(), [{ ...grpcInfer("fast", ELEMENTS + 100), id: "big" }]);
      expect(streamed).toMatchObject({ error_message: expect.stringMatching(refusal) as unknown, infer_response: { id: "big" } });
      // Small requests still fit beside it.
      expect((await binaryInfer(server.httpUrl, "fast", 16)).status).toBe(200);
    } finally {
      holder.destroy();
    }
    await budgetGivenBack();
    expect(await grpc.unary("ModelInfer", grpcInfer("fast", ELEMENTS))).toMatchObject({ model_name: "fast" });
  });

  /** Waits until a request of most of the budget is answered again: whatever a test held was given back. */
  async function budgetGivenBack(): Promise<void> {
    await waitFor("the budget to be given back", 30_000, async () => {
      const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
      await answer.arrayBuffer(); // read whole: the request's bytes are given back once its answer is written
      return answer.status === 200 ? true : undefined;
    });
  }

  /**
   * Opens a request that has sent `bytes` of a body that goes on (announced by Content-Length or chunked), and
   * returns its socket once the server holds them: a probe one byte larger than what is left beside them is
   * refused. A probe may take the room while the body is still coming and get the body refused instead; then the
   * body is sent again, on a new connection.
   */
  async function holdingBody(framing: "content-length" | "chunked", bytes: number): Promise<Socket> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const holder = await openRaw(server.httpPort!, inferHead(framing === "chunked" ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${bytes + 1}\r\n`));
      holder.socket.write(framing === "chunked" ? chunkOf(bytes) : Buffer.alloc(bytes));
      const outcome = await waitFor(`a body of ${bytes} bytes to be held`, 30_000, async () => {
        if (holder.received() !== "") return "refused";
        const probe = await fetch(`${server.httpUrl}/v2/models/fast/infer`, { method: "POST", body: Buffer.alloc(BUDGET - bytes + 1), headers: { "content-type": "application/octet-stream" } });
        const error = await errorOf(probe);
        if (probe.status !== 503) return undefined;
        expect(error).toMatch(refusal);
        return "held";
      });
      if (outcome === "held") return holder.socket;
      holder.socket.destroy();
    }
    throw new Error(`a body of ${bytes} bytes was refused ten times`);
  }

  it("refuses a body larger than the whole budget from its Content-Length as too large (400), before reading it", async () => {
    const sender = await openRaw(server.httpPort!, inferHead(`Content-Length: ${BUDGET + 1}\r\n`));
    try {
      const answer = await answerOf(sender);
      expect(answer.status).toBe(400);
      expect(answer.error).toMatch(neverFits);
    } finally {
      sender.socket.destroy();
    }
  });

  it("holds nothing for bodies announced and not sent: slow senders do not block other requests", async () => {
    // Each announces the whole budget and sends one byte; the server's 100 Continue says it took its headers.
    const senders = await Promise.all(Array.from({ length: 16 }, () => openRaw(server.httpPort!, inferHead(`Content-Length: ${BUDGET}\r\nExpect: 100-continue\r\n`))));
    try {
      await waitFor("the slow senders' headers to be taken", 30_000, async () => (senders.every((sender) => sender.received().includes("100 Continue")) ? true : undefined));
      for (const sender of senders) sender.socket.write(Buffer.alloc(1));
      const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
      expect(await grpc.unary("ModelInfer", grpcInfer("fast", ELEMENTS))).toMatchObject({ model_name: "fast" });
    } finally {
      for (const sender of senders) sender.socket.destroy();
    }
  });

  it("counts a chunked body as its chunks arrive, and refuses it when the budget runs out part-way", async () => {
    // 700 KB sent of a chunked body that has not ended: the others in flight may hold only what is left.
    const left = BUDGET - 700_000;
    const holder = await holdingBody("chunked", 700_000);
    try {
      // A second chunked body, refused at the byte that outgrows what is left, not once it has all come.
      const second = await openRaw(server.httpPort!, inferHead("Transfer-Encoding: chunked\r\n"));
      second.socket.write(chunkOf(left + 1));
      try {
        const answer = await answerOf(second);
        expect(answer.status).toBe(503);
        expect(answer.error).toMatch(refusal);
      } finally {
        second.socket.destroy();
      }
    } finally {
      holder.destroy();
    }
    await budgetGivenBack();
  });

  it("refuses a chunked body as too large (400) once more of it has come than the whole budget", async () => {
    const sender = await openRaw(server.httpPort!, inferHead("Transfer-Encoding: chunked\r\n"));
    sender.socket.write(chunkOf(BUDGET + 1));
    try {
      const answer = await answerOf(sender);
      expect(answer.status).toBe(400);
      expect(answer.error).toMatch(neverFits);
    } finally {
      sender.socket.destroy();
    }
  });

  it("counts what a gzip or deflate body inflates to as it is inflated: a small bomb is refused before it is whole", async () => {
    // 8 KB that inflate to 8 MiB of zeros, more than the whole budget.
    for (const [encoding, compress] of [["gzip", gzipSync], ["deflate", deflateSync]] as const) {
      const answer = await fetch(`${server.httpUrl}/v2/models/fast/infer`, {
        method: "POST", body: compress(Buffer.alloc(8 << 20)), headers: { "content-type": "application/json", "content-encoding": encoding },
      });
      expect(answer.status).toBe(400);
      expect(await errorOf(answer)).toMatch(neverFits);
    }
    // One that fits the budget alone is refused beside a body that holds most of it: its output was counted, not
    // only its compressed bytes (which fit).
    const holder = await holdingBody("content-length", BUDGET - ELEMENTS * 4);
    try {
      const refused = await fetch(`${server.httpUrl}/v2/models/fast/infer`, {
        method: "POST", body: deflateSync(Buffer.alloc(ELEMENTS * 4)), headers: { "content-type": "application/json", "content-encoding": "deflate" },
      });
      expect(refused.status).toBe(503);
      expect(await errorOf(refused)).toMatch(refusal);
    } finally {
      holder.destroy();
    }
    await budgetGivenBack();
  });

  it("counts the tensors a JSON body decodes to, not only the body", async () => {
    // ~600 KB of JSON, within the budget, that decodes to 1.2 MB of INT32, beyond the whole of it: too large.
    const elements = 300_000;
    const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements], data: new Array<number>(elements).fill(1) }] });
    const answer = await fetch(`${server.httpUrl}/v2/models/fast/infer`, { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(answer.status).toBe(400);
    expect(await errorOf(answer)).toMatch(neverFits);
  });

  it("holds the copies an admitted request will cost: one whose body fits the budget but whose copies do not is refused before it is queued", async () => {
    // 600 KB of INT32, within the budget as a body or message; with the batch copy of its input and its output
    // (and over gRPC the response message), beyond the whole of it: too large, not run and then out of memory.
    const elements = 150_000;
    const http = await binaryInfer(server.httpUrl, "fast", elements);
    expect(http.status).toBe(400);
    expect(await errorOf(http)).toMatch(neverFits);
    const grpcError = await grpcCallError(grpc.unary("ModelInfer", grpcInfer("fast", elements)));
    expect(grpcError.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(grpcError.details).toMatch(neverFits);
    const [streamed] = await streamResponses(grpc.modelStreamInfer(), [{ ...grpcInfer("fast", elements), id: "copies" }]);
    expect(streamed).toMatchObject({ error_message: expect.stringMatching(neverFits) as unknown, infer_response: { id: "copies" } });
    await budgetGivenBack();
  });

  it("lets a request's copies pass the budget while no admitted request holds any: bodies still arriving cannot refuse everyone", async () => {
    // The body fits beside the one still coming (with room for the 64 KiB steps its memory comes in), its copies
    // (batch and output, twice the body) do not: refused there, a burst of bodies that filled the budget between
    // them would have refused every one of them.
    const { body } = binaryInferBody(ELEMENTS);
    const holder = await holdingBody("content-length", BUDGET - body.byteLength - 70_000);
    try {
      const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    } finally {
      holder.destroy();
    }
    await budgetGivenBack();
  });

  it("holds a ModelStreamInfer message as it arrives, without ending its stream: the others are refused meanwhile", async () => {
    // A stream whose message announces most of the budget and has sent all of it but a byte.
    const session = connectHttp2(`http://${server.grpcAddress}`);
    const stream = session.request({
      ":method": "POST", ":path": "/inference.GRPCInferenceService/ModelStreamInfer", "content-type": "application/grpc", te: "trailers",
    });
    const length = BUDGET - 200_000;
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(length, 1);
    stream.write(Buffer.concat([prefix, Buffer.alloc(length - 1)]));
    try {
      await waitFor("the stream's message to be held", 30_000, async () => {
        const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
        await answer.arrayBuffer();
        return answer.status === 503 ? true : undefined;
      });
      // The stream was not refused for it.
      expect(stream.closed).toBe(false);
    } finally {
      stream.close();
      session.close();
    }
    await budgetGivenBack();
  });

  it("counts a gRPC message as it arrives, and what a gzip-compressed one inflates to as it is inflated", async () => {
    // 8 KB that inflate to an 8 MiB message, more than the whole budget.
    const bomb = await grpcCallError(gzipGrpc.unary("ModelInfer", grpcLongId(8 << 20)));
    expect(bomb.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(bomb.details).toMatch(neverFits);
    // Messages that fit alone, refused beside a body that holds most of the budget: the message was counted,
    // though it carries no tensor for its request to hold.
    const holder = await holdingBody("content-length", BUDGET - ELEMENTS * 4);
    try {
      for (const client of [grpc, gzipGrpc]) {
        const refused = await grpcCallError(client.unary("ModelInfer", grpcLongId(ELEMENTS * 4)));
        expect(refused.code).toBe(status.RESOURCE_EXHAUSTED);
        expect(refused.details).toMatch(refusal);
      }
    } finally {
      holder.destroy();
    }
    await budgetGivenBack();
    expect(await gzipGrpc.unary("ModelInfer", grpcLongId(ELEMENTS * 4))).toMatchObject({ model_name: "fast", id: "a".repeat(ELEMENTS * 4) });
  });
});
