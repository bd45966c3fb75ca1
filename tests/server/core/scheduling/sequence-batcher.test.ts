import { afterEach, describe, expect, it } from "vitest";
import type { BackendExecution, BackendInstance, ExecutionTimes, TensorMap } from "../../../../server/backends/backend";
import { gatherInputs, scatterOutputs } from "../../../../server/backends/batch-io";
import { InstancePool } from "../../../../server/core/scheduling/instance-pool";
import type { ModelSignature } from "../../../../server/core/model-config/model-signature";
import type { ValidatedRequest } from "../../../../server/core/request/request-validation";
import { SequenceBatcher, type SequenceBatcherSettings } from "../../../../server/core/scheduling/sequence-batcher";
import type { ControlInputSpec } from "../../../../server/core/scheduling/sequence-control";
import type { StateSpec } from "../../../../server/core/scheduling/sequence-state";
import { int32, int32Values } from "../../../helpers/int32-tensors";
import { scheduled } from "../../../helpers/scheduled-request";


/** Lets the event loop turn until `done` holds, at most 20 turns: enough for the batcher to react, no clock involved. */
async function turns(done: () => boolean): Promise<void> {
  for (let i = 0; i < 20 && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A backend instance whose executions the test finishes one at a time: OUTPUT = STATE_OUT = INPUT + STATE_IN. */
class SteppedInstance implements BackendInstance {
  readonly io = undefined;
  readonly executionThread = "main";
  readonly executionProvider = "cpu";
  readonly groupsExecutions = false;
  readonly executions: TensorMap[] = [];
  readonly #pending: (() => void)[] = [];

  async execute([requests]: readonly BackendExecution[]): Promise<ExecutionTimes[]> {
    const inputs = await gatherInputs(requests!);
    this.executions.push(inputs);
    const input = int32Values(inputs.get("INPUT")!.data);
    const state = inputs.has("STATE_IN") ? int32Values(inputs.get("STATE_IN")!.data) : input.map(() => 0);
    const sum = { datatype: "INT32", shape: [input.length, 1], data: int32(input.map((v, i) => v + state[i]!)) } as const;
    await new Promise<void>((resolve) => this.#pending.push(resolve));
    scatterOutputs(new Map([["OUTPUT", sum], ["STATE_OUT", { ...sum, data: sum.data.slice() }]]), requests!);
    const now = process.hrtime.bigint();
    return [{ startNs: now, endNs: now, computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 }];
  }

  /** Finishes the oldest running execution and lets the batcher react (assembling a batch is asynchronous). */
  async finish(): Promise<void> {
    await turns(() => this.#pending.length > 0);
    this.#pending.shift()!();
    await turns(() => false);
  }

  async close(): Promise<void> {}
}

const SIGNATURE: ModelSignature = {
  maxBatchSize: 4,
  inputs: [{ name: "INPUT", datatype: "INT32", dims: [1], reshape: undefined, optional: false, labels: undefined }],
  outputs: [{ name: "OUTPUT", datatype: "INT32", dims: [1], reshape: undefined, optional: false, labels: undefined }],
  controls: [{ name: "READY", datatype: "INT32" }],
};
const READY: ControlInputSpec = { name: "READY", datatype: "INT32", kind: "READY", falseTrue: [0, 1] };
const STATE: StateSpec = { inputName: "STATE_IN", outputName: "STATE_OUT", datatype: "INT32", initial: { name: "STATE_IN", datatype: "INT32", shape: [1, 1], data: int32([0]) } };

const opened: SequenceBatcher[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sequences) => sequences.close()));
});

function batcher(
  strategy: "direct" | "oldest", slotsPerInstance: number, states: readonly StateSpec[] = [], clock?: { now: number },
): { sequences: SequenceBatcher; instance: SteppedInstance } {
  const instance = new SteppedInstance();
  const settings: SequenceBatcherSettings = {
    strategy, slotsPerInstance, idleUs: 60_000_000, controls: [READY], states,
    direct: { maxQueueDelayUs: 0, minimumSlotUtilization: 0, slotCount: 4 },
    oldest: { maxBatchSize: 4, preferredBatchSizes: [], maxQueueDelayUs: 0 },
  };
  // As the loader builds it: the state inputs are among the inputs the server fills.
  const signature = { ...SIGNATURE, controls: [...SIGNATURE.controls, ...states.map((state) => ({ name: state.inputName, datatype: state.datatype }))] };
  const sequences = new SequenceBatcher("m", signature, settings, new InstancePool([instance]), { executed: () => undefined }, clock && (() => clock.now));
  opened.push(sequences);
  return { sequences, instance };
}

const request = (value: number): ValidatedRequest => ({
  batchSize: 1, shapeKey: "[1]", inputs: new Map([["INPUT", { name: "INPUT", datatype: "INT32", shape: [1, 1], data: int32([value]) }]]), outputs: [{ name: "OUTPUT" }],
});
const send = (sequences: SequenceBatcher, id: number, value: number, flags: { start?: boolean; end?: boolean } = {}) =>
  scheduled(sequences, request(value), { parameters: { sequence_id: id, sequence_start: flags.start === true, sequence_end: flags.end === true } });
const column = (inputs: TensorMap, name: string): number[] => int32Values(inputs.get(name)!.data);

describe("SequenceBatcher", () => {
  it("direct: batch position = slot; an empty slot runs as a null request with READY 0", async () => {
    const { sequences, instance } = batcher("direct", 4);
    const a = send(sequences, 1, 10, { start: true }); // slot 0, runs at once
    const b = send(sequences, 2, 20, { start: true }); // slot 1, waits for the instance
    await instance.finish();
    await a;
    expect(column(instance.executions[1]!, "INPUT")).toEqual([20, 20]); // slot 0 empty: a copy of b's inputs ...
    expect(column(instance.executions[1]!, "READY")).toEqual([0, 1]); // ... that the model must ignore
    await instance.finish();
    expect((await b).outputs.map((o) => [o.name, int32Values(o.data)])).toEqual([["OUTPUT", [20]]]);
  });

  it("oldest: one request per sequence per batch; the next request of a sequence joins a later batch", async () => {
    const { sequences, instance } = batcher("oldest", 4);
    const first = [send(sequences, 1, 1, { start: true })]; // executes alone
    first.push(send(sequences, 1, 2), send(sequences, 2, 5, { start: true }), send(sequences, 2, 6));
    await instance.finish();
    // In the order they reached the instance's dynamic batcher: sequence 2's START at once, sequence 1's next once its first finished.
    expect(column(instance.executions[1]!, "INPUT")).toEqual([5, 2]);
    await instance.finish();
    expect(column(instance.executions[2]!, "INPUT")).toEqual([6]);
    await instance.finish();
    await Promise.all(first);
  });

  it("carries implicit state per sequence; START starts again from the initial state; state outputs stay on the server", async () => {
    const { sequences, instance } = batcher("oldest", 2, [STATE]);
    const answers = [send(sequences, 1, 1, { start: true }), send(sequences, 2, 100, { start: true })];
    await instance.finish();
    answers.push(send(sequences, 1, 2), send(sequences, 2, 5, { end: true }));
    await instance.finish();
    await instance.finish();
    answers.push(send(sequences, 1, 3, { start: true }));
    await instance.finish();
    const sums = await Promise.all(answers);
    expect(sums.map((s) => int32Values(s.outputs[0]!.data)[0])).toEqual([1, 100, 3, 105, 3]);
    expect(sums.every((s) => s.outputs.length === 1)).toBe(true);
  });

  it("backlogs a sequence beyond the slots until END frees one", async () => {
    const { sequences, instance } = batcher("direct", 1);
    const a = send(sequences, 1, 1, { start: true });
    const b = send(sequences, 2, 2, { start: true });
    await instance.finish();
    await a;
    expect(instance.executions.length).toBe(1); // b waits in the backlog, the instance is idle
    const end = send(sequences, 1, 3, { end: true });
    await instance.finish();
    await end;
    await instance.finish();
    expect(int32Values((await b).outputs[0]!.data)).toEqual([2]);
    expect(instance.executions.map((inputs) => column(inputs, "INPUT"))).toEqual([[1], [3], [2]]);
  });

  it("ends a sequence idle for max_sequence_idle_microseconds before judging its late request (fake clock)", async () => {
    const clock = { now: 0 };
    const { sequences, instance } = batcher("direct", 1, [], clock);
    const first = send(sequences, 1, 1, { start: true });
    await instance.finish();
    await first;
    clock.now = 59_999_999;
    const second = send(sequences, 1, 2); // still alive: its idle time starts again
    await instance.finish();
    await second;
    clock.now = 59_999_999 + 60_000_000;
    await expect(send(sequences, 1, 3)).rejects.toThrow("inference request for sequence 1 to model 'm' must specify the START flag on the first request of the sequence");
    const restarted = send(sequences, 1, 4, { start: true }); // the slot is free again
    await instance.finish();
    expect(int32Values((await restarted).outputs[0]!.data)).toEqual([4]);
  });

  it("a cancelled queued request cancels its sequence's other queued requests and ends it, as Triton", async () => {
    const { sequences, instance } = batcher("direct", 1);
    const first = send(sequences, 1, 1, { start: true }); // executing
    const abort = new AbortController();
    const cancelled = scheduled(sequences, request(2), { parameters: { sequence_id: 1 }, signal: abort.signal });
    const after = send(sequences, 1, 3);
    abort.abort();
    await expect(cancelled).rejects.toThrow("request was cancelled by the client");
    await expect(after).rejects.toThrow("request was cancelled by the client");
    await expect(send(sequences, 1, 4)).rejects.toThrow("must specify the START flag");
    await instance.finish();
    await first;
    expect(instance.executions.length).toBe(1);
  });
});
