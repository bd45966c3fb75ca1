import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";

const TRITON_CONFIGS = path.join(SHARED_DATA, "triton-configs");

/**
 * An identity model of a sequence whose CORRID control comes back as OUTPUT1 (the identity backend copies input i,
 * the control inputs following the model's own, to output i): what the server fills is what the client reads.
 */
function corridEcho(repository: string, name: string, corridType: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 8
sequence_batching {
  max_sequence_idle_microseconds: 300000
  control_input [ { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: ${corridType} } ] } ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "CORRID_OUT" data_type: ${corridType} dims: [ 1 ] } ]`);
}

interface Answer { status: number; body: { outputs?: { name: string; shape: number[]; data: number[] }[]; error?: string } }

describe("sequence batcher (Triton's sequence_batch_scheduler semantics)", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "sequence-repo-"));
    for (const name of ["simple_sequence", "simple_dyna_sequence"]) cpSync(path.join(TRITON_CONFIGS, name), path.join(repository, name), { recursive: true });
    for (const [name, type] of [["corrid_uint64", "TYPE_UINT64"], ["corrid_int32", "TYPE_INT32"], ["corrid_string", "TYPE_STRING"]] as const) {
      corridEcho(repository, name, type);
    }
    server = await startServer({ repository });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  /** `parameters` is JSON text, so that a 64-bit sequence_id travels exactly. */
  async function inferText(model: string, values: number[], parameters: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST",
      body: `{"parameters":${parameters},"inputs":[${JSON.stringify({ name: "INPUT", datatype: "INT32", shape: [values.length, 1], data: values })}]}`,
    });
    return { status: response.status, text: await response.text() };
  }

  async function infer(model: string, values: number[], parameters: Record<string, unknown>): Promise<Answer> {
    const { status, text } = await inferText(model, values, JSON.stringify(parameters));
    return { status, body: JSON.parse(text) as Answer["body"] };
  }

  it("refuses a request of batch size 2 with Triton's message", async () => {
    const answer = await infer("simple_sequence", [1, 2], { sequence_id: 11, sequence_start: true });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("inference request to model 'simple_sequence' must specify batch-size 1 due to requirements of sequence batcher");
  });

  it("fills a UINT64 CORRID with the whole 64-bit correlation ID", async () => {
    const answer = await inferText("corrid_uint64", [1], `{"sequence_id":9223372036854775813,"sequence_start":true}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`"name":"CORRID_OUT","datatype":"UINT64","shape":[1,1],"data":[9223372036854775813]`);
  });

  it("fills a 32-bit CORRID with the ID's low-order 32 bits, as Triton", async () => {
    const answer = await inferText("corrid_int32", [1], `{"sequence_id":1152921504606846983,"sequence_start":true}`); // 2^60 + 7
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`"name":"CORRID_OUT","datatype":"INT32","shape":[1,1],"data":[7]`);
  });

  it("fills a STRING CORRID with a string correlation ID, and refuses a string ID for a numeric CORRID", async () => {
    const text = await infer("corrid_string", [1], { sequence_id: "session-a", sequence_start: true });
    expect(text.body.outputs?.[1]).toEqual({ name: "CORRID_OUT", datatype: "BYTES", shape: [1, 1], data: ["session-a"] });
    const refused = await infer("corrid_uint64", [1], { sequence_id: "session-a", sequence_start: true });
    expect(refused).toEqual({
      status: 400,
      body: { error: "inference request to model 'corrid_uint64' must specify an unsigned integer correlation ID: its CORRID control input 'CORRID' is UINT64, got string 'session-a'" },
    });
  });

  it("ends a sequence idle for max_sequence_idle_microseconds: its next request without START gets Triton's error", async () => {
    expect((await infer("corrid_uint64", [1], { sequence_id: 77, sequence_start: true })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 600)); // twice the model's 300 ms idle time
    expect(await infer("corrid_uint64", [2], { sequence_id: 77 })).toEqual({
      status: 400, body: { error: "inference request for sequence 77 to model 'corrid_uint64' must specify the START flag on the first request of the sequence" },
    });
  });
});
