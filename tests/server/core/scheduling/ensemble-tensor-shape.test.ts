import { describe, expect, it } from "vitest";
import { ensembleTensorShape } from "../../../../server/core/scheduling/ensemble-tensor-shape";

describe("ensembleTensorShape (Triton's EnsembleContext::ReshapeTensorDims)", () => {
  it("leaves the shape alone when both sides batch, or neither does", () => {
    expect(ensembleTensorShape([-1], true, 3, [3, 16])).toEqual([3, 16]);
    expect(ensembleTensorShape([16], false, 0, [16])).toEqual([16]);
  });

  it("gives an unbatched tensor that matches a batching model's dims a batch of 1", () => {
    expect(ensembleTensorShape([-1], true, 0, [16])).toEqual([1, 16]);
    expect(ensembleTensorShape([-1], true, 0, [0])).toEqual([1, 0]);
    // Already shaped as the batching side wants: passed as it is.
    expect(ensembleTensorShape([16], true, 0, [2, 16])).toEqual([2, 16]);
  });

  it("takes the batch dimension off a batch of 1 only where the non-batching dims need it", () => {
    expect(ensembleTensorShape([16], false, 1, [1, 16])).toEqual([16]);
    expect(ensembleTensorShape([-1, 16], false, 1, [1, 16])).toEqual([1, 16]);
    expect(ensembleTensorShape([16], false, 2, [2, 16])).toEqual([2, 16]);
  });
});
