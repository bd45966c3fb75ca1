import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../../../client/index";
import { bruteGrid } from "../../../tools/tune/brute-grid";
import { buildSearchSpaces, isValidCoordinate, nearestCoordinate, settingsAt } from "../../../tools/tune/search-space";
import { defaultConcurrency, describeSettings, settingsKey, settingsOfConfig, type TunedSettings } from "../../../tools/tune/tuned-settings";

const RESNET50_START: TunedSettings = {
  device: { kind: "KIND_CPU" }, instanceCount: 1, intraOpThreads: 2, maxBatchSize: 8,
  dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] },
};

function effectiveConfig(fields: Partial<ModelConfig> & Record<string, unknown>): ModelConfig {
  return { name: "m", max_batch_size: 8, input: [], output: [], ...fields };
}

describe("settingsOfConfig", () => {
  it("reads the tuned fields of an effective configuration, threads by the server's rule when unset", () => {
    const config = effectiveConfig({
      instance_group: [{ count: 2, kind: "KIND_CPU" }, { count: 1, kind: "KIND_CPU" }],
      dynamic_batching: { max_queue_delay_microseconds: 100, preferred_batch_size: [4, 8] },
    });
    expect(settingsOfConfig(config, 16)).toEqual({
      device: { kind: "KIND_CPU" }, instanceCount: 3, intraOpThreads: 5, maxBatchSize: 8,
      dynamicBatching: { maxQueueDelayUs: 100, preferredBatchSizes: [4, 8] },
    });
    const pinned = effectiveConfig({ instance_group: [{ count: 1, kind: "KIND_CPU" }], parameters: { intra_op_thread_count: { string_value: "3" } } });
    expect(settingsOfConfig(pinned, 16)).toMatchObject({ intraOpThreads: 3, dynamicBatching: undefined });
    const gpu = effectiveConfig({
      max_batch_size: 0, instance_group: [{ count: 1, kind: "KIND_GPU" }],
      optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: "tensorrt" }] } },
    });
    expect(settingsOfConfig(gpu, 16)).toEqual({ device: { kind: "KIND_GPU", accelerator: "tensorrt" }, instanceCount: 1, intraOpThreads: undefined, maxBatchSize: 0, dynamicBatching: undefined });
  });

  it("describes settings, keys equal behaviour alike, and loads them as Model Analyzer does (2 x instances x batch)", () => {
    expect(describeSettings(RESNET50_START)).toBe("1 x CPU (2 threads), max batch 8, delay 0 us");
    const unbatched = { ...RESNET50_START, maxBatchSize: 1, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] } };
    expect(settingsKey(unbatched)).toBe(settingsKey({ ...unbatched, dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] } }));
    expect(settingsKey(RESNET50_START)).not.toBe(settingsKey({ ...RESNET50_START, dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] } }));
    expect(defaultConcurrency(RESNET50_START, 1024)).toBe(16);
    expect(defaultConcurrency({ ...RESNET50_START, instanceCount: 3, maxBatchSize: 0 }, 1024)).toBe(6);
    expect(defaultConcurrency({ ...RESNET50_START, maxBatchSize: 64 }, 100)).toBe(100);
  });
});

describe("buildSearchSpaces", () => {
  it("searches instances, threads, batch size and queue delay on a CPU-only machine, with the start's values included", () => {
    const spaces = buildSearchSpaces({ ...RESNET50_START, dynamicBatching: { maxQueueDelayUs: 300, preferredBatchSizes: [] } }, { cores: 2, gpuCount: 0 });
    expect(spaces).toEqual([{
      device: { kind: "KIND_CPU" }, cores: 2, instanceCount: [1, 2], intraOpThreads: [1, 2], maxBatchSize: [1, 2, 4, 8, 16, 32, 64],
      maxQueueDelayUs: [0, 300, 500, 2000], preferredBatchSize: [0],
    }]);
  });

  it("adds KIND_GPU with each accelerator only where the server reported a GPU", () => {
    const spaces = buildSearchSpaces(RESNET50_START, { cores: 8, gpuCount: 1 });
    expect(spaces.map((space) => space.device)).toEqual([
      { kind: "KIND_CPU" }, { kind: "KIND_GPU", accelerator: "cuda" }, { kind: "KIND_GPU", accelerator: "tensorrt" }, { kind: "KIND_GPU", accelerator: "webgpu" },
    ]);
    const gpu = spaces[2]!;
    expect(gpu.intraOpThreads).toEqual([undefined]);
    expect(gpu.instanceCount).toEqual([1, 2, 3, 4, 5]);
    expect(settingsAt(gpu, [1, 0, 3, 0, 0])).toEqual({
      device: { kind: "KIND_GPU", accelerator: "tensorrt" }, instanceCount: 2, intraOpThreads: undefined, maxBatchSize: 8,
      dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] },
    });
    expect(buildSearchSpaces(RESNET50_START, { cores: 8, gpuCount: 2 }, { gpuAccelerators: ["tensorrt"] }).map((s) => s.device.kind)).toEqual(["KIND_CPU", "KIND_GPU"]);
  });

  it("adds no delay of its own for a start without a dynamic batcher", () => {
    const [space] = buildSearchSpaces({ ...RESNET50_START, dynamicBatching: undefined }, { cores: 2, gpuCount: 0 }, { queueDelaysUs: [500] });
    expect(space!.maxQueueDelayUs).toEqual([500]);
    expect(settingsAt(space!, nearestCoordinate(space!, { ...RESNET50_START, dynamicBatching: undefined })).dynamicBatching).toEqual({ maxQueueDelayUs: 500, preferredBatchSizes: [] });
  });

  it("keeps a model that does not batch unbatched", () => {
    const [space] = buildSearchSpaces({ ...RESNET50_START, maxBatchSize: 0, dynamicBatching: undefined }, { cores: 4, gpuCount: 0 }, { instanceCounts: [1, 2] });
    expect(space).toMatchObject({ maxBatchSize: [0], maxQueueDelayUs: [undefined], preferredBatchSize: [0] });
    expect(bruteGrid(space!).map((c) => describeSettings(settingsAt(space!, c)))).toEqual([
      "1 x CPU (1 thread)", "1 x CPU (2 threads)", "1 x CPU (4 threads)", "2 x CPU (1 thread)", "2 x CPU (2 threads)",
    ]);
  });
});

describe("bruteGrid", () => {
  it("crosses every dimension, filters oversubscribed CPUs and too-large preferred sizes, and measures equal behaviour once", () => {
    const [space] = buildSearchSpaces(RESNET50_START, { cores: 2, gpuCount: 0 }, { maxBatchSizes: [1, 8], queueDelaysUs: [0, 500], preferredBatchSizes: [0, 4, 16] });
    const grid = bruteGrid(space!).map((c) => settingsAt(space!, c));
    // (1 x 1, 1 x 2, 2 x 1 threads) x (batch 1 once; batch 8 x 2 delays x preferred none/4) = 3 x 5
    expect(grid).toHaveLength(15);
    expect(grid.every((s) => s.instanceCount * s.intraOpThreads! <= 2)).toBe(true);
    expect(grid.some((s) => s.dynamicBatching?.preferredBatchSizes.includes(16))).toBe(false);
    expect(new Set(grid.map(settingsKey)).size).toBe(15);
    expect(isValidCoordinate(space!, [1, 1, 0, 0, 0])).toBe(false); // 2 instances x 2 threads on 2 cores
    expect(isValidCoordinate(space!, [0, 9, 0, 0, 0])).toBe(false);
    expect(nearestCoordinate(space!, RESNET50_START)).toEqual([0, 1, 1, 0, 0]);
  });
});
