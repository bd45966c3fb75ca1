import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";

const TRITON_CONFIGS = path.join(SHARED_DATA, "triton-configs");

interface Answer { status: number; body: { outputs?: { name: string; shape: number[]; data: number[] }[]; error?: string } }

describe("sequence batcher (Triton's sequence_batch_scheduler semantics)", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "sequence-repo-"));
    for (const name of ["simple_sequence", "simple_dyna_sequence"]) cpSync(path.join(TRITON_CONFIGS, name), path.join(repository, name), { recursive: true });
    server = await startServer({ repository });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  async function infer(model: string, values: number[], parameters: Record<string, unknown>): Promise<Answer> {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST",
      body: JSON.stringify({ parameters, inputs: [{ name: "INPUT", datatype: "INT32", shape: [values.length, 1], data: values }] }),
    });
    return { status: response.status, body: (await response.json()) as Answer["body"] };
  }

  it("refuses a request of batch size 2 with Triton's message", async () => {
    const answer = await infer("simple_sequence", [1, 2], { sequence_id: 11, sequence_start: true });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("inference request to model 'simple_sequence' must specify batch-size 1 due to requirements of sequence batcher");
  });
});
