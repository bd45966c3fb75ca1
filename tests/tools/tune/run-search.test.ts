import { describe, expect, it } from "vitest";
import { runSearch } from "../../../tools/tune/run-search";
import { buildSearchSpaces } from "../../../tools/tune/search-space";
import { describeSettings, settingsKey, type TunedSettings } from "../../../tools/tune/tuned-settings";

const START: TunedSettings = { device: { kind: "KIND_CPU" }, instanceCount: 1, intraOpThreads: 4, maxBatchSize: 8, dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] } };

/** A made-up machine where a GPU with TensorRT at 2 instances and batch 32 is best, and webgpu does not load (score 0). */
function fakeThroughput(settings: TunedSettings): number {
  const batchGain = Math.min(settings.maxBatchSize, 32) / 32;
  if (settings.device.kind === "KIND_CPU") return 50 * batchGain * Math.min(settings.instanceCount * settings.intraOpThreads!, 4);
  if (settings.device.accelerator === "webgpu") return 0;
  const speed = settings.device.accelerator === "tensorrt" ? 1000 : 700;
  return speed * batchGain * (settings.instanceCount === 2 ? 1.2 : 1) - (settings.dynamicBatching?.maxQueueDelayUs ?? 0) / 100;
}

describe("runSearch", () => {
  it("walks every device's space where a GPU is reported and finds the best, measuring each behaviour once", async () => {
    const spaces = buildSearchSpaces(START, { cores: 4, gpuCount: 1 });
    const measured: TunedSettings[] = [];
    const scores = new Map([[settingsKey(START), fakeThroughput(START)]]);
    const outcome = await runSearch({ mode: "quick", spaces, start: START, maxCandidates: 200 }, async (settings) => {
      measured.push(settings);
      return fakeThroughput(settings);
    }, scores);
    expect(outcome.truncated).toBe(false);
    expect(outcome.notes).toHaveLength(4);
    expect(outcome.notes[2]).toMatch(/^quick search on GPU\/tensorrt ended at 2 x GPU\/tensorrt, max batch (32|64), delay 0 us: /);
    const keys = measured.map(settingsKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain(settingsKey(START));
    const best = [...scores.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
    expect(best[1]).toBe(1200);
    expect(measured.filter((s) => s.device.kind === "KIND_GPU" && s.device.accelerator === "webgpu").length).toBeGreaterThan(0);
    const gridSize = spaces.reduce((total, s) => total + s.instanceCount.length * s.intraOpThreads.length * s.maxBatchSize.length * s.maxQueueDelayUs.length, 0);
    expect(measured.length).toBeLessThan(gridSize / 3);
  });

  it("measures the whole grid in brute mode, and stops at the candidate budget", async () => {
    const [space] = buildSearchSpaces(START, { cores: 2, gpuCount: 0 }, { maxBatchSizes: [1, 8], queueDelaysUs: [0] });
    const all: string[] = [];
    await runSearch({ mode: "brute", spaces: [space!], start: START, maxCandidates: 100 }, async (s) => {
      all.push(describeSettings(s));
      return 1;
    }, new Map());
    // instances x threads within 2 cores: 1x1, 1x2, 1x4 (no: 4 > 2), 2x1 -> 3, each with batch 1 and 8; the start (1 x 4 threads) is in the space but over 2 cores.
    expect(all).toEqual([
      "1 x CPU (1 thread), max batch 1", "1 x CPU (1 thread), max batch 8, delay 0 us",
      "1 x CPU (2 threads), max batch 1", "1 x CPU (2 threads), max batch 8, delay 0 us",
      "2 x CPU (1 thread), max batch 1", "2 x CPU (1 thread), max batch 8, delay 0 us",
    ]);
    let count = 0;
    const cut = await runSearch({ mode: "brute", spaces: [space!], start: START, maxCandidates: 3 }, async () => ++count, new Map([["x", 1]]));
    expect(count).toBe(2);
    expect(cut).toEqual({ truncated: true, notes: ["stopped after 3 candidates (--max-candidates)"] });
  });
});
