import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";

const EXECUTE_MS = 300;

/**
 * A decoupled model that answers inside execute(): it blocks its worker for EXECUTE_MS, then sends its one response
 * with the final flag before execute returns (as docs/typescript-models.md's `Shout` does).
 */
const ANSWERS_INSIDE_EXECUTE_JS = `
"use strict";
class AnswersInside {
  execute(requests) {
    for (const request of requests) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${EXECUTE_MS});
      request.responseSender.send({ outputs: { OUT: { datatype: "INT32", shape: [1], data: Int32Array.of(1) } } }, { final: true });
    }
  }
}
module.exports = AnswersInside;
`;

interface DurationStat {
  readonly count: number;
  readonly ns: number;
}

describe("a request's times are its own, for every kind of model", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "request-times-"));
    const dir = path.join(repository, "answers_inside");
    mkdirSync(path.join(dir, "1"), { recursive: true });
    writeFileSync(path.join(dir, "1", "model.js"), ANSWERS_INSIDE_EXECUTE_JS);
    writeFileSync(path.join(dir, "config.pbtxt"), [
      'backend: "typescript"', "max_batch_size: 0",
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]', 'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      "model_transaction_policy { decoupled: true }", "instance_group [ { count: 1 kind: KIND_CPU } ]",
    ].join("\n"));
    server = await startServer({ repository, services: ["http", "metrics"] });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("a decoupled model answering inside execute() is charged the queue time its requests waited (stats and metrics)", async () => {
    // Three at once on one instance: the second waits for the first execution, the third for two.
    const answers = await Promise.all([0, 1, 2].map(() => fetch(`${server.httpUrl}/v2/models/answers_inside/generate`, {
      method: "POST", body: JSON.stringify({ IN: 0 }),
    }).then((response) => response.json())));
    expect(answers).toEqual([0, 1, 2].map(() => ({ OUT: 1, model_name: "answers_inside", model_version: "1" })));
    const stats = await fetch(`${server.httpUrl}/v2/models/answers_inside/stats`).then((r) => r.json()) as {
      model_stats: { inference_stats: { success: DurationStat; queue: DurationStat } }[];
    };
    const { success, queue } = stats.model_stats[0]!.inference_stats;
    expect(success.count).toBe(3);
    expect(queue.count).toBe(3);
    // At least 0 + 1 + 2 executions of EXECUTE_MS were waited in all, whatever the machine's speed.
    expect(queue.ns).toBeGreaterThanOrEqual(3 * EXECUTE_MS * 1e6 * 0.95);
    expect(queue.ns).toBeLessThan(success.ns);
    const metrics = await fetch(`${server.metricsUrl}/metrics`).then((r) => r.text());
    const queueUs = Number(/^nv_inference_queue_duration_us\{model="answers_inside",version="1"\} (\d+)/m.exec(metrics)?.[1]);
    expect(queueUs).toBeGreaterThanOrEqual(3 * EXECUTE_MS * 1e3 * 0.95);
  });
});
