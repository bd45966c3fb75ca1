import { describe, expect, it } from "vitest";
import { type ControlInputSpec, SequenceTracker } from "../../../../server/core/scheduling/sequence-control";
import type { Tensor } from "../../../../server/core/request/tensor";

const START: ControlInputSpec = { name: "START", datatype: "INT32", kind: "START", falseTrue: [0, 1] };
const END: ControlInputSpec = { name: "END", datatype: "FP32", kind: "END", falseTrue: [0, 1] };
const READY: ControlInputSpec = { name: "READY", datatype: "BOOL", kind: "READY", falseTrue: [false, true] };
const corrid = (datatype: ControlInputSpec["datatype"]): ControlInputSpec => ({ name: "CORRID", datatype, kind: "CORRID", falseTrue: [0, 0] });

/** A tracker on a fake clock (µs) with Triton's L0_sequence_batcher idle time of 5 s. */
function tracker(controls: readonly ControlInputSpec[], idleUs = 5_000_000): { sequences: SequenceTracker; clock: { now: number } } {
  const clock = { now: 0 };
  return { sequences: new SequenceTracker("m", controls, idleUs, () => clock.now), clock };
}

const view = (tensor: Tensor): DataView => new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
const control = (controls: Tensor[], name: string): Tensor => controls.find((c) => c.name === name)!;

describe("SequenceTracker: Triton's sequence batcher rules", () => {
  it("refuses a request of several batch elements first, with Triton's message", () => {
    const { sequences } = tracker([]);
    expect(() => sequences.prepare({}, 2, true)).toThrow("inference request to model 'm' must specify batch-size 1 due to requirements of sequence batcher");
  });

  it("fills START, END and READY with the configured false/true values, per request", () => {
    const { sequences } = tracker([START, END, READY]);
    const first = sequences.prepare({ sequence_id: 7, sequence_start: true }, 1, true).controls;
    expect([view(control(first, "START")).getInt32(0, true), view(control(first, "END")).getFloat32(0, true), control(first, "READY").data[0]]).toEqual([1, 0, 1]);
    expect(control(first, "START").shape).toEqual([1, 1]);
    const last = sequences.prepare({ sequence_id: 7, sequence_end: true }, 1, false).controls;
    expect([view(control(last, "START")).getInt32(0, true), view(control(last, "END")).getFloat32(0, true), control(last, "READY").data[0]]).toEqual([0, 1, 1]);
    expect(control(last, "END").shape).toEqual([1]);
  });

  it("ends a sequence idle for max_sequence_idle_microseconds: a later request without START is refused", () => {
    const { sequences, clock } = tracker([]);
    sequences.prepare({ sequence_id: 3, sequence_start: true }, 1, true);
    clock.now = 4_999_999;
    sequences.prepare({ sequence_id: 3 }, 1, true); // still alive, and its idle time starts again
    clock.now = 4_999_999 + 5_000_000;
    expect(() => sequences.prepare({ sequence_id: 3 }, 1, true))
      .toThrow("inference request for sequence 3 to model 'm' must specify the START flag on the first request of the sequence");
    expect(() => sequences.prepare({ sequence_id: 3, sequence_start: true }, 1, true)).not.toThrow();
  });

  it("ends a sequence at END: the next request needs START again", () => {
    const { sequences } = tracker([]);
    sequences.prepare({ sequence_id: "s", sequence_start: true, sequence_end: true }, 1, true);
    expect(() => sequences.prepare({ sequence_id: "s" }, 1, true)).toThrow("inference request for sequence s to model 'm' must specify the START flag");
  });

  it("refuses a request without a correlation ID, 0 or \"\" included", () => {
    const { sequences } = tracker([]);
    for (const id of [undefined, 0, 0n, ""]) {
      expect(() => sequences.prepare(id === undefined ? {} : { sequence_id: id, sequence_start: true }, 1, true))
        .toThrow("inference request to model 'm' must specify a non-zero or non-empty correlation ID");
    }
  });

  it("keeps a string ID and the number with the same digits as different sequences", () => {
    const { sequences } = tracker([]);
    sequences.prepare({ sequence_id: 5, sequence_start: true }, 1, true);
    expect(() => sequences.prepare({ sequence_id: "5" }, 1, true)).toThrow("must specify the START flag");
  });

  it.each([
    ["UINT64", 2n ** 63n + 5n, (v: DataView) => v.getBigUint64(0, true), 2n ** 63n + 5n],
    ["INT64", 2n ** 64n - 1n, (v: DataView) => v.getBigInt64(0, true), -1n],
    ["UINT32", 2n ** 32n + 5n, (v: DataView) => v.getUint32(0, true), 5],
    ["INT32", 2n ** 60n + 7n, (v: DataView) => v.getInt32(0, true), 7],
    ["INT32", 2 ** 32 - 1, (v: DataView) => v.getInt32(0, true), -1],
  ] as const)("fills a %s CORRID with the ID's low-order bytes (%s)", (datatype, id, read, want) => {
    const { sequences } = tracker([corrid(datatype)]);
    const { controls } = sequences.prepare({ sequence_id: id, sequence_start: true }, 1, true);
    expect(read(view(controls[0]!))).toBe(want);
  });

  it("fills a STRING CORRID with the string ID as one element, a numeric ID as its digits", () => {
    const { sequences } = tracker([corrid("BYTES")]);
    const text = sequences.prepare({ sequence_id: "session-a", sequence_start: true }, 1, true).controls[0]!;
    expect(Buffer.from(text.data)).toEqual(Buffer.concat([Buffer.from([9, 0, 0, 0]), Buffer.from("session-a")]));
    const number = sequences.prepare({ sequence_id: 42, sequence_start: true }, 1, true).controls[0]!;
    expect(Buffer.from(number.data).subarray(4).toString()).toBe("42");
  });

  it("refuses a string ID for a numeric CORRID, before the sequence starts", () => {
    const { sequences } = tracker([corrid("UINT64")]);
    expect(() => sequences.prepare({ sequence_id: "abc", sequence_start: true }, 1, true))
      .toThrow("inference request to model 'm' must specify an unsigned integer correlation ID: its CORRID control input 'CORRID' is UINT64, got string 'abc'");
    expect(() => sequences.prepare({ sequence_id: "abc" }, 1, true)).toThrow("must specify the START flag");
  });

  it("refuses a sequence_id that is neither an unsigned integer nor a string", () => {
    const { sequences } = tracker([]);
    expect(() => sequences.prepare({ sequence_id: 1.5, sequence_start: true }, 1, true)).toThrow("'sequence_id' must be an unsigned integer or a string, got 1.5");
    expect(() => sequences.prepare({ sequence_id: true, sequence_start: true }, 1, true)).toThrow("'sequence_id' must be an unsigned integer or a string");
  });
});
