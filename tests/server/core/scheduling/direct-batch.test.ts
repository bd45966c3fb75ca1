import { describe, expect, it } from "vitest";
import { directBatch, type DirectPolicy } from "../../../../server/core/scheduling/direct-batch";

const NO_DELAY: DirectPolicy = { maxQueueDelayUs: 0, minimumSlotUtilization: 0, slotCount: 4 };
const head = (enqueueUs = 0, shapeKey = "[1]") => ({ enqueueUs, shapeKey });

describe("directBatch: Triton's Direct strategy batch", () => {
  it("is idle with nothing queued", () => {
    expect(directBatch([undefined, undefined], 0, NO_DELAY)).toEqual({ kind: "idle" });
  });

  it("puts slot i at batch position i, up to the highest slot with a request, null requests in the gaps", () => {
    expect(directBatch([undefined, head(), undefined, head(), undefined], 0, NO_DELAY))
      .toEqual({ kind: "send", positions: ["null", "request", "null", "request"] });
    expect(directBatch([head()], 0, NO_DELAY)).toEqual({ kind: "send", positions: ["request"] });
  });

  it("runs a request whose shapes differ from the batch's as a null position (it waits for the next batch)", () => {
    expect(directBatch([head(0, "[2]"), head(0, "[3]"), head(0, "[2]")], 0, NO_DELAY))
      .toEqual({ kind: "send", positions: ["request", "null", "request"] });
  });

  it("with max_queue_delay and minimum_slot_utilization: waits until enough slots are ready or the oldest waited the delay", () => {
    const policy: DirectPolicy = { maxQueueDelayUs: 1000, minimumSlotUtilization: 0.5, slotCount: 4 };
    expect(directBatch([head(100)], 600, policy)).toEqual({ kind: "wait", us: 501 });
    expect(directBatch([head(100)], 1101, policy)).toEqual({ kind: "send", positions: ["request"] });
    expect(directBatch([head(100), undefined, head(500)], 600, policy)).toEqual({ kind: "send", positions: ["request", "null", "request"] });
  });
});
