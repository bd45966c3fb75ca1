import { describe, expect, it } from "vitest";
import { loadLevels, parseLoadRange } from "../../../tools/perf/load-range";

const take = (iterable: Iterable<number>, count: number): number[] => {
  const out: number[] = [];
  for (const value of iterable) {
    if (out.length === count) break;
    out.push(value);
  }
  return out;
};

describe("parseLoadRange and loadLevels", () => {
  it("expands start, start:end and start:end:step as perf_analyzer does", () => {
    expect([...loadLevels(parseLoadRange("4", "concurrency"))]).toEqual([4]);
    expect([...loadLevels(parseLoadRange("1:4", "concurrency"))]).toEqual([1, 2, 3, 4]);
    expect([...loadLevels(parseLoadRange("1:8:3", "concurrency"))]).toEqual([1, 4, 7]);
    expect([...loadLevels(parseLoadRange("0.1:0.5:0.2", "request-rate"))]).toEqual([0.1, 0.3, 0.5]);
  });

  it("keeps growing when the concurrency end is 0", () => {
    expect(take(loadLevels(parseLoadRange("2:0:2", "concurrency")), 4)).toEqual([2, 4, 6, 8]);
  });

  it("rejects malformed and out-of-range values with the reason", () => {
    expect(() => parseLoadRange("1:x", "concurrency")).toThrow(/end of '1:x' must be a positive integer/);
    expect(() => parseLoadRange("1.5", "concurrency")).toThrow(/start of '1.5' must be a positive integer/);
    expect(() => parseLoadRange("4:2", "concurrency")).toThrow(/end of '4:2' is below its start/);
    expect(() => parseLoadRange("1:2:3:4", "concurrency")).toThrow(/not start\[:end\[:step\]\]/);
    expect(() => parseLoadRange("10:0", "request-rate")).toThrow(/end of '10:0' must be a positive number/);
    expect(() => parseLoadRange("1::2", "concurrency")).toThrow(/not start/);
  });
});
