import { describe, expect, it } from "vitest";
import { spanThroughput } from "../../../tools/perf/throughput-measurement";

const MS = 1e6;

/** Completion times of a server that finishes `batch` requests together every `periodMs`, from `startMs`. */
function batchedCompletions(batch: number, periodMs: number, startMs: number, untilMs: number): number[] {
  const times: number[] = [];
  for (let t = startMs; t <= untilMs; t += periodMs) {
    for (let i = 0; i < batch; i++) times.push(t * MS + i * 0.01 * MS); // a batch's responses leave 10 us apart
  }
  return times;
}

describe("spanThroughput", () => {
  it("measures a batching server's rate exactly, wherever the span falls against its cycle", () => {
    // 8 requests every 400 ms = 20/s. A fixed 5 s window counts 12 or 13 batches: 19.2 or 20.8.
    for (const startMs of [0, 37, 199, 371]) {
      expect(spanThroughput(batchedCompletions(8, 400, startMs, 7000), 5000 * MS)).toBeCloseTo(20, 1);
    }
  });

  it("is the plain event rate for requests that finish one at a time", () => {
    expect(spanThroughput(batchedCompletions(1, 10, 5, 2000), 1000 * MS)).toBeCloseTo(100, 6);
  });

  it("is undefined until a completion closes the span", () => {
    expect(spanThroughput([], 1000 * MS)).toBeUndefined();
    expect(spanThroughput(batchedCompletions(1, 10, 0, 990), 1000 * MS)).toBeUndefined();
  });
});
