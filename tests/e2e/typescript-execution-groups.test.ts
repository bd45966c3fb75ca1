import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeCallerModel } from "../helpers/bls-test-models";
import { writeProbeModel } from "../helpers/typescript-test-models";

interface Stats {
  inference_count: number;
  execution_count: number;
  batch_stats: { batch_size: number; compute_infer: { count: number } }[];
}

interface InferAnswer {
  readonly status: number;
  readonly body: { outputs?: { name: string; data: number[] }[]; error?: string };
}

/**
 * A TypeScript model without a dynamic batcher, under concurrent requests: the queued requests may reach its worker
 * together, yet each is its own execution (execute() once per request), answered, counted and failed on its own.
 */
describe("TypeScript model without dynamic batching, concurrent requests", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "typescript-groups-"));
    writeProbeModel(repository, { name: "probe", dynamicBatching: false });
    writeCallerModel(repository, { name: "caller", dynamicBatching: false });
    server = await startServer({ repository, services: ["http"], args: ["--exit-on-error", "false", "--instance-restart-backoff-ms", "10"] });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  async function infer(value: number, behave?: string, model = "probe", parameters: Record<string, string> = {}): Promise<InferAnswer> {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({
        inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [value] }], outputs: [{ name: "OUTPUT0" }],
        parameters: { ...parameters, ...(behave === undefined ? {} : { behave }) },
      }),
    });
    return { status: response.status, body: await response.json() as InferAnswer["body"] };
  }

  async function stats(): Promise<Stats> {
    const body = await fetch(`${server.httpUrl}/v2/models/probe/stats`).then((r) => r.json()) as { model_stats: Stats[] };
    return body.model_stats[0]!;
  }

  /** The first request holds the instance for a while, so that the others wait in the queue together. */
  function concurrently(behaviours: readonly (string | undefined)[]): Promise<InferAnswer[]> {
    return Promise.all(behaviours.map((behave, i) => infer(i + 1, i === 0 ? "pause" : behave)));
  }

  it("answers each request with its own outputs, and counts one execution of batch size 1 per request", async () => {
    const before = await stats();
    const answers = await concurrently(Array.from({ length: 12 }, () => undefined));
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect(answer.body.outputs).toEqual([expect.objectContaining({ name: "OUTPUT0", data: [i + 1] })]);
    });
    const after = await stats();
    expect(after.inference_count - before.inference_count).toBe(12);
    expect(after.execution_count - before.execution_count).toBe(12);
    expect(after.batch_stats.map((b) => b.batch_size)).toEqual([1]);
    const executedBefore = before.batch_stats[0]?.compute_infer.count ?? 0;
    expect(after.batch_stats[0]!.compute_infer.count - executedBefore).toBe(12);
  });

  it("fails only the request whose execution failed, or whose response is an error", async () => {
    const behaviours = [undefined, undefined, "invalid", undefined, "throw", undefined, undefined, undefined];
    const answers = await concurrently(behaviours);
    expect(answers[2]).toEqual({ status: 400, body: { error: "the model refuses this request" } });
    expect(answers[4]).toEqual({ status: 500, body: { error: "TypeScript model execute() failed: execute exploded" } });
    answers.forEach((answer, i) => {
      if (i === 2 || i === 4) return;
      expect(answer.status).toBe(200);
      expect(answer.body.outputs).toEqual([expect.objectContaining({ name: "OUTPUT0", data: [i + 1] })]);
    });
  });

  it("ties each model call (BLS) to the request whose execution made it", async () => {
    // The first call holds the callee for a while, so that the caller's other requests wait in its queue together.
    const callBehaviours = ["pause", undefined, undefined, "invalid", undefined, undefined, undefined, undefined];
    const answers = await Promise.all(callBehaviours.map((callBehave, i) => {
      return infer(i + 1, undefined, "caller", { route: "probe", ...(callBehave === undefined ? {} : { call_behave: callBehave }) });
    }));
    expect(answers[3]).toEqual({ status: 400, body: { error: "probe: the model refuses this request" } });
    answers.forEach((answer, i) => {
      if (i === 3) return;
      expect(answer.status).toBe(200);
      expect(answer.body.outputs).toEqual([expect.objectContaining({ name: "OUTPUT0", data: [i + 1] })]);
    });
  });

  it("fails the requests handed over with a worker that dies with its error, and serves again once it restarted", async () => {
    const answers = await concurrently([undefined, undefined, undefined, "exit", undefined, undefined]);
    const died = { status: 500, body: { error: "the instance's worker thread exited with code 3" } };
    expect(answers[0]!.status).toBe(200);
    expect(answers[3]).toEqual(died);
    // A request that reached the worker with the one that exited fails with it; one still queued ran after the restart.
    answers.forEach((answer, i) => {
      if (answer.status !== 200) expect(answer).toEqual(died);
      else expect(answer.body.outputs).toEqual([expect.objectContaining({ name: "OUTPUT0", data: [i + 1] })]);
    });
    expect((await infer(7)).body.outputs).toEqual([expect.objectContaining({ name: "OUTPUT0", data: [7] })]);
  });
});
