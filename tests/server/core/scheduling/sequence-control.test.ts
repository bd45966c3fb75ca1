import { describe, expect, it } from "vitest";
import { type ControlInputSpec, controlTensors, sequenceRequestOf } from "../../../../server/core/scheduling/sequence-control";
import type { Tensor } from "../../../../server/core/request/tensor";

const START: ControlInputSpec = { name: "START", datatype: "INT32", kind: "START", falseTrue: [0, 1] };
const END: ControlInputSpec = { name: "END", datatype: "FP32", kind: "END", falseTrue: [0, 1] };
const READY: ControlInputSpec = { name: "READY", datatype: "BOOL", kind: "READY", falseTrue: [false, true] };
const corrid = (datatype: ControlInputSpec["datatype"]): ControlInputSpec => ({ name: "CORRID", datatype, kind: "CORRID", falseTrue: [0, 0] });

const view = (tensor: Tensor): DataView => new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
const control = (controls: Tensor[], name: string): Tensor => controls.find((c) => c.name === name)!;
const controlsOf = (specs: readonly ControlInputSpec[], parameters: Record<string, unknown>, batching = true): Tensor[] =>
  controlTensors(specs, "m", sequenceRequestOf("m", parameters as never, 1), batching);

describe("sequence control inputs: Triton's sequence batcher rules", () => {
  it("refuses a request of several batch elements first, with Triton's message", () => {
    expect(() => sequenceRequestOf("m", {}, 2)).toThrow("inference request to model 'm' must specify batch-size 1 due to requirements of sequence batcher");
  });

  it("fills START, END and READY with the configured false/true values, per request", () => {
    const first = controlsOf([START, END, READY], { sequence_id: 7, sequence_start: true });
    expect([view(control(first, "START")).getInt32(0, true), view(control(first, "END")).getFloat32(0, true), control(first, "READY").data[0]]).toEqual([1, 0, 1]);
    expect(control(first, "START").shape).toEqual([1, 1]);
    const last = controlsOf([START, END, READY], { sequence_id: 7, sequence_end: true }, false);
    expect([view(control(last, "START")).getInt32(0, true), view(control(last, "END")).getFloat32(0, true), control(last, "READY").data[0]]).toEqual([0, 1, 1]);
    expect(control(last, "END").shape).toEqual([1]);
  });

  it("fills a null request (an empty Direct batch position) with every flag false and CORRID 0 or \"\"", () => {
    const nulls = controlTensors([START, END, READY, corrid("UINT64")], "m", undefined, true);
    expect([view(control(nulls, "START")).getInt32(0, true), view(control(nulls, "END")).getFloat32(0, true), control(nulls, "READY").data[0]]).toEqual([0, 0, 0]);
    expect(view(control(nulls, "CORRID")).getBigUint64(0, true)).toBe(0n);
    expect(Buffer.from(controlTensors([corrid("BYTES")], "m", undefined, true)[0]!.data)).toEqual(Buffer.from([0, 0, 0, 0]));
  });

  it("refuses a request without a correlation ID, 0 or \"\" included", () => {
    for (const id of [undefined, 0, 0n, ""]) {
      expect(() => sequenceRequestOf("m", id === undefined ? {} : { sequence_id: id, sequence_start: true }, 1))
        .toThrow("inference request to model 'm' must specify a non-zero or non-empty correlation ID");
    }
  });

  it("keeps a string ID and the number with the same digits as different sequences", () => {
    expect(sequenceRequestOf("m", { sequence_id: 5 }, 1).key).not.toBe(sequenceRequestOf("m", { sequence_id: "5" }, 1).key);
    expect(sequenceRequestOf("m", { sequence_id: 5 }, 1).key).toBe(sequenceRequestOf("m", { sequence_id: 5n }, 1).key);
  });

  it.each([
    ["UINT64", 2n ** 63n + 5n, (v: DataView) => v.getBigUint64(0, true), 2n ** 63n + 5n],
    ["INT64", 2n ** 64n - 1n, (v: DataView) => v.getBigInt64(0, true), -1n],
    ["UINT32", 2n ** 32n + 5n, (v: DataView) => v.getUint32(0, true), 5],
    ["INT32", 2n ** 60n + 7n, (v: DataView) => v.getInt32(0, true), 7],
    ["INT32", 2 ** 32 - 1, (v: DataView) => v.getInt32(0, true), -1],
  ] as const)("fills a %s CORRID with the ID's low-order bytes (%s)", (datatype, id, read, want) => {
    expect(read(view(controlsOf([corrid(datatype)], { sequence_id: id, sequence_start: true })[0]!))).toBe(want);
  });

  it("fills a STRING CORRID with the string ID as one element, a numeric ID as its digits", () => {
    const text = controlsOf([corrid("BYTES")], { sequence_id: "session-a", sequence_start: true })[0]!;
    expect(Buffer.from(text.data)).toEqual(Buffer.concat([Buffer.from([9, 0, 0, 0]), Buffer.from("session-a")]));
    const number = controlsOf([corrid("BYTES")], { sequence_id: 42, sequence_start: true })[0]!;
    expect(Buffer.from(number.data).subarray(4).toString()).toBe("42");
  });

  it("refuses a string ID for a numeric CORRID", () => {
    expect(() => controlsOf([corrid("UINT64")], { sequence_id: "abc", sequence_start: true }))
      .toThrow("inference request to model 'm' must specify an unsigned integer correlation ID: its CORRID control input 'CORRID' is UINT64, got string 'abc'");
  });

  it("refuses a sequence_id that is neither an unsigned integer nor a string", () => {
    expect(() => sequenceRequestOf("m", { sequence_id: 1.5, sequence_start: true }, 1)).toThrow("'sequence_id' must be an unsigned integer or a string, got 1.5");
    expect(() => sequenceRequestOf("m", { sequence_id: true, sequence_start: true }, 1)).toThrow("'sequence_id' must be an unsigned integer or a string");
  });
});
