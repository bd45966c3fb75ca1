import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";
import { grpcCallError, GrpcTestClient, streamResponses } from "./grpc-transport";

const BUDGET = 1 << 20;
/** INT32 elements of one request: 600 KB of tensor, so that one fits the budget and two do not. */
const ELEMENTS = 150_000;
const refusal = /^requests in flight hold more than the server's budget of 1048576 bytes \(--max-inflight-request-bytes\); this request needs \d+: retry later$/;

/** An identity model of INT32 [-1]. */
function writeIdentity(repository: string, name: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
`);
}

function binaryInfer(url: string, model: string, elements: number): Promise<Response> {
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements], parameters: { binary_data_size: elements * 4 } }] }));
  return fetch(`${url}/v2/models/${model}/infer`, {
    method: "POST", body: Buffer.concat([header, Buffer.alloc(elements * 4)]),
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(header.byteLength) },
  });
}

const grpcInfer = (model: string, elements: number): Record<string, unknown> =>
  ({ model_name: model, inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements] }], raw_input_contents: [Buffer.alloc(elements * 4)] });

describe("--max-inflight-request-bytes: a server-wide budget for bytes of requests in flight", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;
  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "budget-repo-"));
    writeIdentity(repository, "fast");
    // No idle timeout: the test's half-sent request must hold its bytes until the test lets it go.
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--max-inflight-request-bytes", String(BUDGET), "--http-idle-timeout-ms", "0"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("answers 503 over HTTP and RESOURCE_EXHAUSTED over gRPC while the budget is full, and takes requests again once it is not", async () => {
    // A request whose body is still coming holds its announced length from its headers on.
    const holder = connect(server.httpPort!, "127.0.0.1");
    holder.write(`POST /v2/models/fast/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${ELEMENTS * 4}\r\n\r\n`);
    try {
      const http = await waitFor("the budget to be full", 30_000, async () => {
        const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
        return answer.status === 200 ? undefined : answer;
      });
      expect(http.status).toBe(503);
      expect(((await http.json()) as { error: string }).error).toMatch(refusal);
      const grpcError = await grpcCallError(grpc.unary("ModelInfer", grpcInfer("fast", ELEMENTS)));
      expect(grpcError.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(grpcError.details).toMatch(refusal);
      // A ModelStreamInfer request gets it as its error response, and the stream goes on.
      const [streamed] = await streamResponses(grpc.modelStreamInfer(), [{ ...grpcInfer("fast", ELEMENTS), id: "big" }]);
      expect(streamed).toMatchObject({ error_message: expect.stringMatching(refusal) as unknown, infer_response: { id: "big" } });
      // Small requests still fit beside it.
      expect((await binaryInfer(server.httpUrl, "fast", 16)).status).toBe(200);
    } finally {
      holder.destroy();
    }
    await waitFor("the budget to be given back", 30_000, async () => {
      const answer = await binaryInfer(server.httpUrl, "fast", ELEMENTS);
      await answer.arrayBuffer(); // read whole: the request's bytes are given back once its answer is written
      return answer.status === 200 ? true : undefined;
    });
    expect(await grpc.unary("ModelInfer", grpcInfer("fast", ELEMENTS))).toMatchObject({ model_name: "fast" });
  });

  it("refuses a body larger than the whole budget from its Content-Length, before reading it", async () => {
    const answer = await binaryInfer(server.httpUrl, "fast", BUDGET / 4 + 1024);
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: string }).error).toMatch(refusal);
  });

  it("counts the tensors a JSON body decodes to, not only the body", async () => {
    // ~600 KB of JSON, within the budget, that decodes to 1.2 MB of INT32, beyond it.
    const elements = 300_000;
    const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [elements], data: new Array<number>(elements).fill(1) }] });
    const answer = await fetch(`${server.httpUrl}/v2/models/fast/infer`, { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: string }).error).toMatch(refusal);
  });
});
