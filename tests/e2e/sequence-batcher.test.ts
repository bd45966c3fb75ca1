import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";
import { accumulatorOnnxModel } from "../../tools/model-builder/index";

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

const ACCUMULATOR_STATE = `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`;

/** The model builder's accumulator (OUTPUT = running sum of the sequence's INPUTs through its implicit state), one instance. */
function accumulator(repository: string, name: string, sequenceBatching: string, { io = true, extra = "" } = {}): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "1", "model.onnx"), accumulatorOnnxModel());
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "onnxruntime"
max_batch_size: 2
sequence_batching { max_sequence_idle_microseconds: 60000000 ${sequenceBatching} }
${io ? `input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]` : ""}
instance_group [ { count: 1 kind: KIND_CPU } ]
${extra}`);
}

/** The accumulator as a TypeScript model: the state tensors reach execute() and leave it like any other. */
const ACCUMULATOR_JS = `"use strict";
module.exports = class Accumulator {
  execute(requests) {
    return requests.map((request) => {
      const sum = { datatype: "INT32", shape: request.inputs.INPUT.shape, data: request.inputs.INPUT.data.map((v, i) => v + request.inputs.STATE_IN.data[i]) };
      return { outputs: { OUTPUT: sum, STATE_OUT: sum } };
    });
  }
};
`;

function typescriptAccumulator(repository: string, name: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "1", "model.js"), ACCUMULATOR_JS);
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "typescript"
max_batch_size: 2
sequence_batching { max_sequence_idle_microseconds: 60000000 ${ACCUMULATOR_STATE} }
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]`);
}

/** An identity model of one instance whose executions take 50 ms: batch positions show in its batch statistics. */
function identitySequence(repository: string, name: string, maxBatchSize: number, sequenceBatching: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: ${maxBatchSize}
sequence_batching { ${sequenceBatching} }
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "50" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]`);
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
    // A warmup sample gives the state input as it gives control inputs (it runs on the instance, past the sequence batcher).
    accumulator(repository, "acc_direct", ACCUMULATOR_STATE, { extra: `model_warmup [ { name: "w" batch_size: 1
      inputs { key: "INPUT" value: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } }
      inputs { key: "STATE_IN" value: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } } } ]` });
    // Preferred batches of 2 and a delay no test waits out: a batch forms only from two sequences' requests.
    accumulator(repository, "acc_oldest", `oldest { max_candidate_sequences: 2 preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 600000000 } ${ACCUMULATOR_STATE}`);
    accumulator(repository, "acc_initial", `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ]
      initial_state [ { name: "thousand" data_type: TYPE_INT32 dims: [ 1 ] data_file: "thousand.bin" } ] } ]`);
    mkdirSync(path.join(repository, "acc_initial", "initial_state"));
    writeFileSync(path.join(repository, "acc_initial", "initial_state", "thousand.bin"), Buffer.from(new Int32Array([1000]).buffer));
    accumulator(repository, "acc_auto", ACCUMULATOR_STATE, { io: false });
    typescriptAccumulator(repository, "acc_typescript");
    identitySequence(repository, "direct_slots", 2, "max_sequence_idle_microseconds: 60000000");
    identitySequence(repository, "one_slot", 1, "max_sequence_idle_microseconds: 60000000");
    identitySequence(repository, "one_slot_idle", 1, "max_sequence_idle_microseconds: 300000");
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

  const sum = (answer: Answer): number | undefined => answer.body.outputs?.find((o) => o.name === "OUTPUT")?.data[0];
  /** One sequence's requests, each sent once the previous one is answered (as a client streams them). */
  async function runSequence(model: string, id: number | string, values: readonly number[]): Promise<(number | undefined)[]> {
    const sums: (number | undefined)[] = [];
    for (const [i, value] of values.entries()) {
      sums.push(sum(await infer(model, [value], { sequence_id: id, sequence_start: i === 0, sequence_end: i === values.length - 1 })));
    }
    return sums;
  }
  async function batchStats(model: string): Promise<number[][]> {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/stats`);
    const body = await response.json() as { model_stats: { batch_stats: { batch_size: number; compute_infer: { count: number } }[] }[] };
    return body.model_stats[0]!.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]);
  }

  describe("implicit state (sequence_batching.state) with a real ONNX accumulator", () => {
    it("carries each sequence's state from one request to the next; interleaved sequences keep their own", async () => {
      const [a, b] = await Promise.all([runSequence("acc_direct", 1001, [5, 3, 2]), runSequence("acc_direct", 1002, [100, 1, 10])]);
      expect(a).toEqual([5, 8, 10]);
      expect(b).toEqual([100, 101, 111]);
      // A new sequence (START) starts from the initial state again, in whatever slot it gets.
      expect(await runSequence("acc_direct", 1001, [7, 1])).toEqual([7, 8]);
    });

    it("answers only the model's outputs, and lists neither state tensor in the metadata", async () => {
      const answer = await infer("acc_direct", [4], { sequence_id: 1003, sequence_start: true, sequence_end: true });
      expect(answer.body.outputs?.map((o) => o.name)).toEqual(["OUTPUT"]);
      for (const model of ["acc_direct", "acc_auto"]) {
        const metadata = await (await fetch(`${server.httpUrl}/v2/models/${model}`)).json() as { inputs: { name: string }[]; outputs: { name: string }[] };
        expect([metadata.inputs.map((t) => t.name), metadata.outputs.map((t) => t.name)]).toEqual([["INPUT"], ["OUTPUT"]]);
      }
      expect(await runSequence("acc_auto", 1004, [2, 2])).toEqual([2, 4]);
    });

    it("carries the state of a TypeScript model too", async () => {
      const [a, b] = await Promise.all([runSequence("acc_typescript", 1008, [1, 2, 3]), runSequence("acc_typescript", 1009, [-1, -2])]);
      expect([a, b]).toEqual([[1, 3, 6], [-1, -3]]);
    });

    it("starts a sequence from its initial_state data_file", async () => {
      expect(await runSequence("acc_initial", 1005, [1, 2])).toEqual([1001, 1003]);
    });

    it("oldest: batches the candidate sequences' next requests, one request per sequence per batch", async () => {
      const [a, b] = await Promise.all([runSequence("acc_oldest", 1006, [1, 2, 3]), runSequence("acc_oldest", 1007, [10, 20, 30])]);
      expect([a, b]).toEqual([[1, 3, 6], [10, 30, 60]]);
      // Only preferred batches of 2 could go (the queue delay is never reached): every step of the two sequences ran together.
      expect(await batchStats("acc_oldest")).toEqual([[2, 3]]);
    });
  });

  describe("Direct and Oldest slots", () => {
    it("direct: a sequence keeps its batch position; an empty position before it runs as a null request", async () => {
      await infer("direct_slots", [1], { sequence_id: 2001, sequence_start: true }); // slot 0: a batch of 1
      await infer("direct_slots", [2], { sequence_id: 2002, sequence_start: true }); // slot 1, slot 0 empty: a batch of 2
      await infer("direct_slots", [3], { sequence_id: 2001, sequence_end: true }); // slot 0 again: a batch of 1
      const answer = await infer("direct_slots", [4], { sequence_id: 2002, sequence_end: true }); // still slot 1
      expect(sum(answer)).toBe(4);
      expect(await batchStats("direct_slots")).toEqual([[1, 2], [2, 2]]);
    });

    it("a sequence beyond the slots waits in the backlog and runs once END frees a slot", async () => {
      expect((await infer("one_slot", [1], { sequence_id: 3001, sequence_start: true })).status).toBe(200);
      let waiting = true;
      const backlogged = infer("one_slot", [9], { sequence_id: 3002, sequence_start: true }).finally(() => (waiting = false));
      expect(sum(await infer("one_slot", [2], { sequence_id: 3001 }))).toBe(2);
      expect(waiting).toBe(true); // the slot still belongs to sequence 3001
      expect((await infer("one_slot", [3], { sequence_id: 3001, sequence_end: true })).status).toBe(200);
      expect(sum(await backlogged)).toBe(9);
      expect(sum(await infer("one_slot", [10], { sequence_id: 3002, sequence_end: true }))).toBe(10);
    });

    it("a backlogged sequence whose request timeout passes fails with Triton's error", async () => {
      expect((await infer("one_slot", [1], { sequence_id: 3101, sequence_start: true })).status).toBe(200);
      expect(await infer("one_slot", [2], { sequence_id: 3102, sequence_start: true, timeout: 100000 })).toEqual({
        status: 503, body: { error: "timeout of the corresponding sequence has been expired" },
      });
      expect((await infer("one_slot", [3], { sequence_id: 3101, sequence_end: true })).status).toBe(200);
    });

    it("the idle timeout frees the slot for a backlogged sequence, and the idle sequence needs START again", async () => {
      expect((await infer("one_slot_idle", [1], { sequence_id: 4001, sequence_start: true })).status).toBe(200);
      expect(sum(await infer("one_slot_idle", [5], { sequence_id: 4002, sequence_start: true, sequence_end: true }))).toBe(5);
      expect(await infer("one_slot_idle", [2], { sequence_id: 4001 })).toEqual({
        status: 400, body: { error: "inference request for sequence 4001 to model 'one_slot_idle' must specify the START flag on the first request of the sequence" },
      });
    });
  });
});
