import { describe, expect, it } from "vitest";
import { isStable } from "../../../tools/perf/is-stable";

const criteria = { stabilityPercentage: 10, windowCount: 3 };
const window = (throughput: number, latencyMs: number | undefined) => ({
  throughput, stabilizingLatencyNs: latencyMs === undefined ? undefined : latencyMs * 1e6,
});

describe("isStable", () => {
  it("needs as many windows as the stability window", () => {
    expect(isStable([window(100, 5), window(100, 5)], criteria)).toBe(false);
    expect(isStable([window(100, 5), window(100, 5), window(100, 5)], criteria)).toBe(true);
  });

  it("accepts a max/min spread up to 1 + percentage on both throughput and latency", () => {
    expect(isStable([window(100, 5), window(110, 5), window(105, 5.5)], criteria)).toBe(true);
    expect(isStable([window(100, 5), window(111, 5), window(105, 5)], criteria)).toBe(false);
    expect(isStable([window(100, 5), window(100, 5.6), window(100, 5)], criteria)).toBe(false);
  });

  it("looks only at the trailing windows", () => {
    expect(isStable([window(10, 50), window(100, 5), window(101, 5), window(99, 5)], criteria)).toBe(true);
  });

  it("never calls a window without completed requests stable", () => {
    expect(isStable([window(0, undefined), window(0, undefined), window(0, undefined)], criteria)).toBe(false);
    expect(isStable([window(100, 5), window(100, undefined), window(100, 5)], criteria)).toBe(false);
  });

  it("follows -s", () => {
    const windows = [window(100, 5), window(120, 5), window(110, 5)];
    expect(isStable(windows, criteria)).toBe(false);
    expect(isStable(windows, { ...criteria, stabilityPercentage: 25 })).toBe(true);
  });
});
