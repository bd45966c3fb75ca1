import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";
import { type GrpcMessage, GrpcTestClient, streamResponses } from "./grpc-transport";

/**
 * A decoupled model after Triton's qa/L0_response_statistics `square_int32` test model: for IN = n it sends
 * n - 2 responses with outputs, one error response, and the final flag alone; with `hold` it sends one response
 * and then waits until its request is cancelled.
 */
const COUNTING_JS = String.raw`
"use strict";
const out = (i) => ({ outputs: { OUT: { datatype: "INT32", shape: [1], data: Int32Array.of(i) } } });
class Counting {
  execute(requests) {
    for (const request of requests) void this.run(request);
  }
  async run(request) {
    const sender = request.responseSender;
    const n = new Int32Array(request.inputs.IN.data.buffer, request.inputs.IN.data.byteOffset, 1)[0];
    try {
      if (request.parameters.hold === true) {
        await sender.send(out(0));
        while (!sender.isCancelled()) await new Promise((resolve) => setTimeout(resolve, 5));
        return;
      }
      for (let i = 0; i < n - 2; i++) await sender.send(out(i));
      await sender.send({ error: { code: "INVALID_ARG", message: "response " + (n - 2) + " fails" } });
      await sender.send(undefined, { final: true });
    } catch (error) {
      if (!sender.isCancelled()) throw error;
    }
  }
}
module.exports = Counting;
`;

interface Duration { count: number; ns: number }
type ResponseStats = Record<string, Record<"compute_infer" | "compute_output" | "success" | "fail" | "empty_response" | "cancel", Duration>>;

const counts = (stats: ResponseStats): Record<string, Record<string, number>> =>
  Object.fromEntries(Object.entries(stats).map(([index, entry]) => [index, Object.fromEntries(Object.entries(entry).map(([name, d]) => [name, Number(d.count)]))]));

const stat = (infer: number, output: number, success: number, fail: number, empty: number, cancel: number): Record<string, number> => ({
  compute_infer: infer, compute_output: output, success, fail, empty_response: empty, cancel,
});

// Triton's qa/L0_response_statistics/response_statistics_test.py: per response index, success counts compute_infer,
// compute_output and success; a failed response without outputs compute_infer and fail; the final flag alone
// compute_infer and empty_response; a cancellation only cancel, at the index of the response that did not come.
describe("response_stats of a decoupled model (Triton's qa/L0_response_statistics)", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "response-stats-"));
    mkdirSync(path.join(repository, "counting", "1"), { recursive: true });
    writeFileSync(path.join(repository, "counting", "1", "model.js"), COUNTING_JS);
    writeFileSync(path.join(repository, "counting", "config.pbtxt"), [
      'backend: "typescript"', "max_batch_size: 0",
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      "model_transaction_policy { decoupled: true }",
    ].join("\n"));
    server = await startServer({ repository, services: ["http", "grpc"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const request = (n: number, hold = false): GrpcMessage => ({
    model_name: "counting", parameters: hold ? { hold: { bool_param: true } } : {},
    inputs: [{ name: "IN", datatype: "INT32", shape: ["1"], contents: { int_contents: [n] } }],
  });
  const httpStats = async (): Promise<ResponseStats> =>
    ((await fetch(`${server.httpUrl}/v2/models/counting/stats`).then((r) => r.json())) as { model_stats: { response_stats: ResponseStats }[] }).model_stats[0]!.response_stats;
  const grpcStats = async (): Promise<ResponseStats> =>
    (await grpc.unary<{ model_stats: { response_stats: ResponseStats }[] }>("ModelStatistics", { name: "counting" })).model_stats[0]!.response_stats;

  it("counts each response at its index, aggregated over requests, the same over HTTP and gRPC", async () => {
    await streamResponses(grpc.modelStreamInfer(), [request(4)]);
    expect(counts(await httpStats())).toEqual({
      0: stat(1, 1, 1, 0, 0, 0), 1: stat(1, 1, 1, 0, 0, 0), 2: stat(1, 0, 0, 1, 0, 0), 3: stat(1, 0, 0, 0, 1, 0),
    });
    await streamResponses(grpc.modelStreamInfer(), [request(6)]);
    const after = await httpStats();
    expect(counts(after)).toEqual({
      0: stat(2, 2, 2, 0, 0, 0), 1: stat(2, 2, 2, 0, 0, 0), 2: stat(2, 1, 1, 1, 0, 0), 3: stat(2, 1, 1, 0, 1, 0),
      4: stat(1, 0, 0, 1, 0, 0), 5: stat(1, 0, 0, 0, 1, 0),
    });
    // A successful response's time is its compute_infer (since the previous response) plus its compute_output.
    expect(after["0"]!.success.ns).toBe(after["0"]!.compute_infer.ns + after["0"]!.compute_output.ns);
    expect(after["0"]!.success.ns).toBeGreaterThan(0);
    expect(counts(await grpcStats())).toEqual(counts(after));
    expect(Object.values(await grpcStats()).map((e) => Number(e.success.ns))).toEqual(Object.values(after).map((e) => e.success.ns));
  });

  it("counts a cancellation at the index of the response that did not come", async () => {
    const before = counts(await httpStats());
    const call = grpc.modelStreamInfer();
    call.on("error", () => undefined);
    const first = new Promise<void>((resolve) => call.once("data", () => resolve()));
    call.write(request(1, true));
    await first;
    call.cancel();
    const after = await waitFor("the cancellation in response_stats", 30_000, async () => {
      const now = counts(await httpStats());
      return now["1"]!["cancel"]! > before["1"]!["cancel"]! ? now : undefined;
    });
    expect(after["0"]).toEqual({ ...before["0"], compute_infer: before["0"]!["compute_infer"]! + 1, compute_output: before["0"]!["compute_output"]! + 1, success: before["0"]!["success"]! + 1 });
    expect(after["1"]).toEqual({ ...before["1"], cancel: 1 });
  });
});
