import { describe, expect, it } from "vitest";
import { LoadGenerator, type RequestSender } from "../../../tools/perf/load-generator";
import { profileLoadLevel } from "../../../tools/perf/profile-load-level";
import type { ModelStatistics } from "../../../client/index";

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("LoadGenerator", () => {
  it("keeps exactly `concurrency` requests outstanding in closed loop", async () => {
    let inFlight = 0;
    let most = 0;
    const send: RequestSender = async () => {
      most = Math.max(most, ++inFlight);
      await later(2);
      inFlight--;
      return { sendNs: 1, receiveNs: 2 };
    };
    const generator = new LoadGenerator(send, { kind: "concurrency", concurrency: 3 });
    generator.start();
    const window = await generator.measureWindow(60);
    await generator.stop();
    expect(most).toBe(3);
    expect(inFlight).toBe(0);
    expect(window.latenciesNs.length).toBeGreaterThan(0);
    expect(window.sendNsTotal).toBe(window.latenciesNs.length);
    expect(window.receiveNsTotal).toBe(2 * window.latenciesNs.length);
  });

  it("starts requests on schedule in open loop without waiting for earlier ones", async () => {
    let inFlight = 0;
    let most = 0;
    const send: RequestSender = async () => {
      most = Math.max(most, ++inFlight);
      await later(50);
      inFlight--;
      return { sendNs: 0, receiveNs: 0 };
    };
    const generator = new LoadGenerator(send, { kind: "request-rate", requestsPerSecond: 200, distribution: "poisson" });
    generator.start();
    await generator.measureWindow(150);
    await generator.stop();
    expect(most).toBeGreaterThan(1);
  });

  it("stops on the first failed request and rejects the window with its error", async () => {
    let calls = 0;
    const generator = new LoadGenerator(async () => {
      if (++calls === 5) throw new Error("server went away");
      await later(1);
      return { sendNs: 0, receiveNs: 0 };
    }, { kind: "concurrency", concurrency: 2 });
    generator.start();
    await expect(generator.measureWindow(10_000)).rejects.toThrow("server went away");
    await generator.stop();
    await expect(generator.measureWindow(1)).rejects.toThrow("server went away");
  });
});

describe("profileLoadLevel", () => {
  function statistics(): () => Promise<ModelStatistics[]> {
    let reads = 0;
    return async () => {
      const count = 10 * reads++;
      const stat = { count, ns: count * 1000 };
      return [{
        name: "m", version: "1", last_inference: 0, inference_count: count, execution_count: count, batch_stats: [],
        inference_stats: { success: stat, fail: stat, queue: stat, compute_input: stat, compute_infer: stat, compute_output: stat, cache_hit: stat, cache_miss: stat },
      }];
    };
  }
  const settings = { measurementIntervalMs: 40, stability: { stabilityPercentage: 10_000, windowCount: 3 }, maxTrials: 6, batchSize: 2, percentile: undefined };

  it("stops once the last three windows agree and merges them, server deltas included", async () => {
    const generator = new LoadGenerator(async () => {
      await later(1);
      return { sendNs: 0, receiveNs: 0 };
    }, { kind: "concurrency", concurrency: 1 });
    generator.start();
    const windows: number[] = [];
    const result = await profileLoadLevel(generator, statistics(), settings, (trial) => windows.push(trial)).finally(() => generator.stop());
    expect(result).toMatchObject({ stable: true, trials: 3 });
    expect(windows).toEqual([1, 2, 3]);
    expect(result.measurement.server.success.count).toBe(30);
    expect(result.measurement.throughput).toBeGreaterThan(0);
  });

  it("gives up after maxTrials windows when they never agree, still reporting the last three", async () => {
    let window = 0;
    const generator = new LoadGenerator(async () => {
      await later(1);
      return { sendNs: 0, receiveNs: 0 };
    }, { kind: "concurrency", concurrency: 1 });
    generator.start();
    const result = await profileLoadLevel(generator, statistics(), { ...settings, stability: { stabilityPercentage: 1e-9, windowCount: 3 }, maxTrials: 4 }, () => window++)
      .finally(() => generator.stop());
    expect(result).toMatchObject({ stable: false, trials: 4 });
    expect(window).toBe(4);
    expect(result.measurement.server.success.count).toBe(30);
  });
});
