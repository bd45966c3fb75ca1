import { describe, expect, it } from "vitest";
import { backendInputs, type BatchSignature } from "../../../../server/core/scheduling/batch-tensors";
import type { ValidatedRequest } from "../../../../server/core/request/request-validation";

const signature: BatchSignature = {
  maxBatchSize: 4,
  inputs: [{ name: "A", datatype: "UINT8", dims: [2], reshape: undefined }, { name: "B", datatype: "UINT8", dims: [2], reshape: undefined }],
  reshapesInputs: false,
  outputs: [],
  outputsByName: new Map(),
};

function request(...names: string[]): ValidatedRequest {
  return { batchSize: 1, shapeKey: "", inputs: new Map(names.map((name) => [name, { name, datatype: "UINT8", shape: [1, 2], data: Uint8Array.of(1, 2) }])), outputs: [] };
}

describe("backendInputs", () => {
  it("hands over a request's own inputs when they are in the backend's form, and puts them in config order when not", () => {
    const inOrder = request("A", "B");
    expect(backendInputs(inOrder, signature)).toBe(inOrder.inputs);
    expect([...backendInputs(request("B", "A"), signature).keys()]).toEqual(["A", "B"]);
    const reshaped = { ...signature, inputs: [{ ...signature.inputs[0]!, reshape: [1, 2] }, signature.inputs[1]!], reshapesInputs: true };
    expect(backendInputs(inOrder, reshaped).get("A")!.shape).toEqual([1, 1, 2]);
  });
});
