import { describe, expect, it } from "vitest";
import type { ModelHandle, ModelInputs, TensorMetadata } from "../../../server/core/index";
import { bytesAfterAdmission, RequestBudgetExceeded, RequestBytesBudget, RequestLargerThanBudget } from "../../../server/frontends/request-bytes-budget";

describe("RequestBytesBudget", () => {
  it("refuses a lease more than is left as retry-later, and more than the whole budget as too large", () => {
    const budget = new RequestBytesBudget(1000);
    const first = budget.lease();
    first.holdAtLeast(600);
    const second = budget.lease();
    expect(() => second.holdAtLeast(500)).toThrow(RequestBudgetExceeded);
    expect(() => second.holdAtLeast(1001)).toThrow(RequestLargerThanBudget);
    expect(() => second.refuseIfNeverFits(1001)).toThrow(/request of at least 1001 bytes exceeds the server's in-flight budget of 1000 bytes/);
    expect(() => second.refuseIfNeverFits(1000)).not.toThrow();
    expect(budget.inFlightBytes).toBe(600);
    first.release();
    first.release();
    expect(budget.inFlightBytes).toBe(0);
  });
});

describe("holdMore", () => {
  it("holds a copy beside what is held, refusing as holdAtLeast does", () => {
    const budget = new RequestBytesBudget(1000);
    const lease = budget.lease();
    lease.holdAtLeast(400);
    lease.holdMore(400);
    expect(lease.heldBytes).toBe(800);
    expect(() => lease.holdMore(201)).toThrow(/request of at least 1001 bytes/);
    const other = budget.lease();
    expect(() => other.holdAtLeast(201)).toThrow(RequestBudgetExceeded);
    lease.release();
    expect(budget.inFlightBytes).toBe(0);
  });
});

describe("admit", () => {
  it("lets one request of a burst whose bodies filled the budget through, past the budget by its copies, and refuses the others' copies", () => {
    const budget = new RequestBytesBudget(1000);
    const bodies = [budget.lease(), budget.lease(), budget.lease(), budget.lease()];
    for (const lease of bodies) lease.holdAtLeast(250);
    bodies[0]!.admit(500);
    expect(budget.inFlightBytes).toBe(1500);
    expect(budget.admittedBytes).toBe(750);
    expect(() => bodies[1]!.admit(500)).toThrow(RequestBudgetExceeded);
    bodies[1]!.release();
    bodies[0]!.release();
    expect([budget.inFlightBytes, budget.admittedBytes]).toEqual([500, 0]);
  });

  it("holds the copies within the budget while another admitted request holds some of it", () => {
    const budget = new RequestBytesBudget(1000);
    const running = budget.lease();
    running.holdAtLeast(100);
    running.admit(100);
    const next = budget.lease();
    next.holdAtLeast(300);
    next.admit(400);
    expect([budget.inFlightBytes, budget.admittedBytes]).toEqual([900, 900]);
    const last = budget.lease();
    last.holdAtLeast(50);
    expect(() => last.admit(51)).toThrow(RequestBudgetExceeded);
    const alone = new RequestBytesBudget(1000).lease();
    alone.holdAtLeast(600);
    expect(() => alone.admit(401)).toThrow(RequestLargerThanBudget);
    running.release();
    next.release();
    last.release();
    expect([budget.inFlightBytes, budget.admittedBytes]).toEqual([0, 0]);
  });
});

describe("overdrawAtLeast", () => {
  it("holds bytes past the budget without refusing them, and the others are refused until they are given back", () => {
    const budget = new RequestBytesBudget(1000);
    const streamed = budget.lease();
    streamed.overdrawAtLeast(1200);
    expect(budget.inFlightBytes).toBe(1200);
    expect(() => budget.lease().holdAtLeast(1)).toThrow(RequestBudgetExceeded);
    streamed.release();
    expect(budget.inFlightBytes).toBe(0);
  });
});

describe("bytesAfterAdmission", () => {
  /** A model as the function reads it: whether it batches, and its outputs as metadata lists them. */
  const model = (batching: boolean, outputs: TensorMetadata[]): Pick<ModelHandle, "inputs" | "tensors"> => ({
    inputs: (): ModelInputs => ({ name: "m", batching, inputs: [] }),
    tensors: () => ({ inputs: [], outputs }),
  });
  const input = (shape: number[], bytes: number) => ({ name: "IN", datatype: "FP32" as const, shape, data: new Uint8Array(bytes) });

  it("counts the batch copy of the inputs and outputs of fixed shape exactly, the batch dimension from the request", () => {
    const fixed = model(true, [{ name: "A", datatype: "FP32", shape: [-1, 10] }, { name: "B", datatype: "INT64", shape: [-1, 2] }]);
    // 4 x 10 FP32 and 4 x 2 INT64 outputs: 160 + 64 bytes, beside the 1000 bytes of inputs copied into the batch.
    expect(bytesAfterAdmission(fixed, { inputs: [input([4, 250], 1000)] })).toBe(1000 + 224);
    // Only the outputs asked for.
    expect(bytesAfterAdmission(fixed, { inputs: [input([4, 250], 1000)], outputs: [{ name: "B" }] })).toBe(1000 + 64);
  });

  it("estimates outputs of variable shape or BYTES as much as the inputs, and counts gRPC's frame beyond the memory it reuses", () => {
    const variable = model(false, [{ name: "A", datatype: "FP32", shape: [-1] }, { name: "S", datatype: "BYTES", shape: [3] }]);
    expect(bytesAfterAdmission(variable, { inputs: [input([250], 1000)] })).toBe(1000 + 1000);
    expect(bytesAfterAdmission(variable, { inputs: [input([250], 1000)] }, { reusesBytes: 1000 })).toBe(2000);
    expect(bytesAfterAdmission(variable, { inputs: [input([250], 1000)] }, { reusesBytes: 0 })).toBe(3000);
  });
});
