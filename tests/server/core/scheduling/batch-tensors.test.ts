import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { assembleBatch, type BatchSignature, COPY_SLICE_BYTES } from "../../../../server/core/scheduling/batch-tensors";
import type { ValidatedRequest } from "../../../../server/core/request/request-validation";

const signature: BatchSignature = {
  maxBatchSize: 4,
  inputs: [{ name: "x", datatype: "UINT8", dims: [-1], reshape: undefined }],
  outputs: [],
  outputsByName: new Map(),
};

function request(data: Uint8Array): ValidatedRequest {
  return { batchSize: 1, shapeKey: "", inputs: new Map([["x", { name: "x", datatype: "UINT8", shape: [1, data.byteLength], data }]]), outputs: [] };
}

describe("assembleBatch", () => {
  it("concatenates the requests' inputs into a buffer of their own along the batch dimension", async () => {
    const first = Uint8Array.of(1, 2, 3);
    const batch = await assembleBatch([request(first), request(Uint8Array.of(4, 5, 6))], signature);
    const x = batch.get("x")!;
    expect(x.shape).toEqual([2, 3]);
    expect([...x.data]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(x.data.buffer).not.toBe(first.buffer);
  });

  it("lets the event loop run while it copies a large input (other requests and health checks are not held up)", async () => {
    const size = 2 * COPY_SLICE_BYTES + 5;
    const data = Buffer.alloc(size, 7);
    data[size - 1] = 9;
    let turns = 0;
    let copying = true;
    const count = async (): Promise<void> => {
      while (copying) {
        await nextTurn();
        turns++;
      }
    };
    const counting = count();
    const batch = await assembleBatch([request(data)], signature);
    copying = false;
    await counting;
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(Buffer.from(batch.get("x")!.data).equals(data)).toBe(true);
  });
});
