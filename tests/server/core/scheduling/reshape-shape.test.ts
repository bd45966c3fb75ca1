import { describe, expect, it } from "vitest";
import { reshapeShape } from "../../../../server/core/scheduling/reshape-shape";

describe("reshapeShape (Triton's config reshape of inputs and outputs)", () => {
  it("gives a fixed reshape as it is", () => {
    expect(reshapeShape([16], [16], [4, 4])).toEqual([4, 4]);
    expect(reshapeShape([4, 4], [4, 4], [16])).toEqual([16]);
  });

  it("fills each -1 of the target with the size at the source's -1, in order", () => {
    expect(reshapeShape([-1], [5], [-1, 1])).toEqual([5, 1]);
    expect(reshapeShape([-1, 1], [5, 1], [-1])).toEqual([5]);
    expect(reshapeShape([-1, 4, -1], [2, 4, 3], [-1, 2, 2, -1])).toEqual([2, 2, 2, 3]);
    expect(reshapeShape([-1], [0], [1, -1])).toEqual([1, 0]);
  });
});
