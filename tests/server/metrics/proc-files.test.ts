import { describe, expect, it } from "vitest";
import { parseProcMeminfo } from "../../../server/metrics/proc-meminfo";
import { cpuUtilizationBetween, parseProcStat } from "../../../server/metrics/proc-stat";

describe("parseProcStat and cpuUtilizationBetween", () => {
  const procStat = (fields: string): string => `cpu  ${fields}\ncpu0 1 2 3 4 5 6 7 8 0 0\nctxt 99\n`;

  it("counts idle as idle + iowait and the total up to steal (guest time is inside user time)", () => {
    // user nice system idle iowait irq softirq steal guest guest_nice
    expect(parseProcStat(procStat("100 10 50 700 40 5 3 2 60 0"))).toEqual({ idleTicks: 740, totalTicks: 910 });
  });

  it("gives the busy share of the ticks between two readings", () => {
    const before = parseProcStat(procStat("100 0 100 700 100 0 0 0 0 0"));
    const after = parseProcStat(procStat("250 0 150 800 100 0 0 0 0 0"));
    expect(cpuUtilizationBetween(before, after)).toBeCloseTo(200 / 300, 12);
    expect(cpuUtilizationBetween(after, after)).toBe(0);
  });

  it("rejects text without an aggregate cpu line", () => {
    expect(() => parseProcStat("cpu0 1 2 3 4\n")).toThrow(/no valid aggregate 'cpu' line/);
    expect(() => parseProcStat("cpu  a b c d\n")).toThrow(/no valid aggregate 'cpu' line/);
  });
});

describe("parseProcMeminfo", () => {
  it("reports used memory as MemTotal - MemAvailable, in bytes", () => {
    const text = "MemTotal:        8000000 kB\nMemFree:          500000 kB\nMemAvailable:    3000000 kB\nCached:          2000000 kB\n";
    expect(parseProcMeminfo(text)).toEqual({ totalBytes: 8000000 * 1024, usedBytes: 5000000 * 1024 });
  });

  it("rejects text without MemAvailable", () => {
    expect(() => parseProcMeminfo("MemTotal:        8000000 kB\nMemFree:          500000 kB\n")).toThrow(/no MemAvailable line/);
  });
});
