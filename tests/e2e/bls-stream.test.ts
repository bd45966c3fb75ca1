import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import { writeCallerModel, writeStreamingCallerModel } from "../helpers/bls-test-models";
import { writeStreamProbeModel } from "../helpers/decoupled-test-model";
import { EXAMPLE_REPOSITORY, type RunningServer, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";

/** What one streamed response says: OUT's value, or the error message. */
type Seen = number | string;

/**
 * Streamed model calls (`context.inferStream`) through the real server: `pipeline` is a decoupled model forwarding
 * the responses of the model it calls (its `route`) to its own client over gRPC; `numbers` is the decoupled stream
 * probe, `once` the same model answering once (not decoupled).
 */
describe("TypeScript models streaming the responses of the models they call (BLS, decoupled callees)", () => {
  let repository: string;
  let pipelineDir: string;
  let numbersDir: string;
  let server: RunningServer;
  let client: InferenceClient;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "bls-stream-"));
    numbersDir = writeStreamProbeModel(repository, "numbers");
    writeStreamProbeModel(repository, "once", { decoupled: false });
    pipelineDir = writeStreamingCallerModel(repository, "pipeline");
    writeCallerModel(repository, { name: "caller" });
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--instance-restart-backoff-ms", "10"] });
    client = new InferenceClient({ url: `grpc://${server.grpcAddress!}` });
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  /** Streams a request to `pipeline`; leaves the loop after `stopAfter` responses when given. */
  async function pipeline(count: number, parameters: Record<string, string>, stopAfter?: number): Promise<Seen[]> {
    const seen: Seen[] = [];
    for await (const response of client.inferStream("pipeline", [{ name: "COUNT", datatype: "INT32", shape: [1], data: [count] }], { parameters })) {
      seen.push("result" in response ? response.result.data("OUT", "INT32")[0]! : response.error.message);
      if (seen.length === stopAfter) break;
    }
    return seen;
  }

  function report(dir: string, tag: string): Promise<unknown> {
    const file = path.join(dir, `${tag}.json`);
    return waitFor(`${tag}.json`, 30_000, async () => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as unknown : undefined));
  }

  it("yields every response of a decoupled callee, in order, and ends after its final one", async () => {
    const count = 50;
    expect(await pipeline(count, { route: "numbers" })).toEqual(Array.from({ length: count }, (_, i) => i));
    // The callee's final flag sent alone ends the loop as well.
    expect(await pipeline(3, { route: "numbers", final_alone: "true" })).toEqual([0, 1, 2]);
    expect(await pipeline(0, { route: "numbers" })).toEqual([]);
  });

  it("yields exactly one response of a callee that is not decoupled", async () => {
    expect(await pipeline(1, { route: "once", behave: "returns" })).toEqual([0]);
  });

  it("cancels the callee's request when the model leaves its loop early", async () => {
    expect(await pipeline(0, { route: "numbers", behave: "endless", tag: "left-early", take: "3" })).toEqual([0, 1, 2]);
    expect(await report(numbersDir, "left-early")).toMatchObject({ sendThrew: true });
  });

  it("cancels the stream when the request that made the call is cancelled", async () => {
    expect(await pipeline(0, { route: "numbers", behave: "endless", tag: "outer-cancel", report: "outer-cancel" }, 2)).toEqual([0, 1]);
    expect(await report(numbersDir, "outer-cancel")).toMatchObject({ sendThrew: true });
    expect(await report(pipelineDir, "outer-cancel")).toEqual({ code: "CANCELLED", message: "request was cancelled by the client" });
  });

  it("rejects with the callee's error response mid-stream, after the responses before it", async () => {
    expect(await pipeline(1, { route: "numbers", behave: "error", report: "error" })).toEqual([0, "numbers: response 1 is refused"]);
    expect(await report(pipelineDir, "error")).toEqual({ code: "INVALID_ARG", message: "response 1 is refused" });
  });

  it("rejects with INTERNAL when the callee's worker dies mid-stream, and both models serve on", async () => {
    expect(await pipeline(1, { route: "numbers", behave: "exit", report: "exit" })).toEqual([0, "numbers: the instance's worker thread exited with code 7"]);
    expect(await report(pipelineDir, "exit")).toEqual({ code: "INTERNAL", message: "the instance's worker thread exited with code 7" });
    expect(await waitFor("numbers to serve again", 30_000, async () => {
      const seen = await pipeline(2, { route: "numbers" });
      return typeof seen[0] === "number" ? seen : undefined;
    })).toEqual([0, 1]);
  });

  it("cancels the callee's request when the caller's worker dies mid-stream, and the caller serves on", async () => {
    const seen = await pipeline(0, { route: "numbers", behave: "endless", tag: "caller-died", exit_after: "2" });
    expect(seen.at(-1)).toBe("the instance's worker thread exited with code 3");
    expect(await report(numbersDir, "caller-died")).toMatchObject({ sendThrew: true });
    expect(await waitFor("pipeline to serve again", 30_000, async () => {
      const answers = await pipeline(1, { route: "numbers" });
      return typeof answers[0] === "number" ? answers : undefined;
    })).toEqual([0]);
  });

  it("refuses a streamed call that could deadlock, as context.infer does", async () => {
    expect(await pipeline(1, { route: "pipeline" })).toEqual([
      "pipeline: model call 'pipeline' -> 'pipeline' refused: it would wait for an instance of 'pipeline' version 1, and all 1 of them are held by the executions waiting on this call",
    ]);
  });

  it("refuses context.infer on a decoupled model, pointing to inferStream", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/caller/infer`, {
      method: "POST", body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1] }], parameters: { route: "numbers" } }),
    });
    expect(await response.json()).toEqual({
      error: "numbers: model 'numbers' is decoupled (model_transaction_policy { decoupled: true }): call it with context.inferStream(), which yields its responses as they come",
    });
  });
});

describe("the example streaming BLS model, text_words", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      repository: EXAMPLE_REPOSITORY, services: ["http"], args: ["--model-control-mode", "explicit", "--load-model", "text_generator", "--load-model", "text_words"],
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const generateStream = (body: Record<string, unknown>): Promise<Response> =>
    fetch(`${server.httpUrl}/v2/models/text_words/generate_stream`, { method: "POST", body: JSON.stringify(body) });

  it("streams text_generator's bytes regrouped into words, one event per word", async () => {
    const response = await generateStream({ text_input: "a rose is a rose is a rose", max_tokens: 12 });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe([" rose", " rose", " r"].map((word) => `data: {"model_name":"text_words","model_version":"1","text_output":"${word}"}\n\n`).join(""));
  });

  it("answers text_generator's error as its own (a first response that is an error: an event, status 400, as Triton's HandleGenerate)", async () => {
    const response = await generateStream({ text_input: "a rose", max_tokens: -1 });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(`data: ${JSON.stringify({ error: "text_generator: request parameter 'max_tokens' must be an integer from 0 to 100000, got '-1'" })}\n\n`);
  });
});
