import type { Coordinate } from "./quick-walk";
import { canonicalSettings, GPU_ACCELERATORS, type GpuAccelerator, type InstanceDevice, type TunedSettings } from "./tuned-settings";

/**
 * Values to try per tuned field; undefined takes the default for the machine and model. Every list is searched
 * together with the starting configuration's own value.
 */
export interface SearchLists {
  readonly instanceCounts?: readonly number[];
  readonly intraOpThreads?: readonly number[];
  readonly maxBatchSizes?: readonly number[];
  readonly queueDelaysUs?: readonly number[];
  /** 0 stands for "no preferred batch size". */
  readonly preferredBatchSizes?: readonly number[];
  readonly gpuAccelerators?: readonly GpuAccelerator[];
}

/** What the machine offers: CPU cores, and the GPUs the server reported. */
export interface MachineResources {
  readonly cores: number;
  readonly gpuCount: number;
}

/**
 * The values of one device's search, one list per dimension, in coordinate order: a coordinate is one index per
 * dimension. Ordered lists, so neighbouring indices are neighbouring settings (what the quick walk relies on).
 */
export interface SearchSpace {
  readonly device: InstanceDevice;
  readonly cores: number;
  readonly instanceCount: readonly number[];
  /** [undefined] where threads are not tuned (GPU devices). */
  readonly intraOpThreads: readonly (number | undefined)[];
  /** [0] for a model that does not batch. */
  readonly maxBatchSize: readonly number[];
  /** [undefined] for a model that does not batch: no dynamic batcher. */
  readonly maxQueueDelayUs: readonly (number | undefined)[];
  /** 0: no preferred batch size. */
  readonly preferredBatchSize: readonly number[];
}

/** Model Analyzer's automatic search limits: at most 5 instances. */
const DEFAULT_MAX_INSTANCES = 5;
const DEFAULT_MAX_BATCH_SIZE = 64;
const DEFAULT_QUEUE_DELAYS_US = [0, 500, 2000];

function sortedUnique(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function powersOfTwoUpTo(max: number): number[] {
  const values: number[] = [];
  for (let value = 1; value <= max; value *= 2) values.push(value);
  return values;
}

function rangeFromOne(max: number): number[] {
  return Array.from({ length: Math.max(1, max) }, (_, i) => i + 1);
}

function sameDevice(a: InstanceDevice, b: InstanceDevice): boolean {
  return a.kind === b.kind && (a.kind === "KIND_CPU" || a.accelerator === (b as { accelerator: GpuAccelerator }).accelerator);
}

/**
 * The spaces to search, one per device: the starting configuration's device, and where the server reported a GPU,
 * KIND_GPU with each accelerator (`cuda`, `tensorrt`, `webgpu` unless `lists.gpuAccelerators` narrows them).
 * Defaults per dimension:
 * - instances 1..min(cores, 5) on CPU (more instances than cores only share the same cores), 1..5 on GPU;
 * - intra-op threads (CPU only) 1, 2, 4, ... up to the core count, and the core count;
 * - max batch size 1, 2, 4, ... 64 for a batching model (a model with max_batch_size 0 keeps 0);
 * - max queue delay 0, 500 and 2000 µs; no preferred batch size (Triton's advice for most models).
 */
export function buildSearchSpaces(start: TunedSettings, machine: MachineResources, lists: SearchLists = {}): SearchSpace[] {
  const batching = start.maxBatchSize > 0;
  const devices: InstanceDevice[] = [start.device];
  if (machine.gpuCount > 0) {
    for (const accelerator of lists.gpuAccelerators ?? GPU_ACCELERATORS) {
      const device: InstanceDevice = { kind: "KIND_GPU", accelerator };
      if (!devices.some((known) => sameDevice(known, device))) devices.push(device);
    }
  }
  return devices.map((device): SearchSpace => {
    const onStartDevice = sameDevice(device, start.device);
    const cpu = device.kind === "KIND_CPU";
    const instanceDefault = rangeFromOne(cpu ? Math.min(machine.cores, DEFAULT_MAX_INSTANCES) : DEFAULT_MAX_INSTANCES);
    const threadDefault = [...powersOfTwoUpTo(machine.cores), machine.cores];
    // A start without a dynamic batcher has no delay or preferred size of its own to add.
    const startDelay = start.dynamicBatching === undefined ? [] : [start.dynamicBatching.maxQueueDelayUs];
    const startPreferred = start.dynamicBatching?.preferredBatchSizes.length === 1 ? [start.dynamicBatching.preferredBatchSizes[0]!] : [];
    return {
      device,
      cores: machine.cores,
      instanceCount: sortedUnique([...(lists.instanceCounts ?? instanceDefault), ...(onStartDevice ? [start.instanceCount] : [])]),
      intraOpThreads: cpu
        ? sortedUnique([...(lists.intraOpThreads ?? threadDefault), ...(start.intraOpThreads !== undefined ? [start.intraOpThreads] : [])])
        : [undefined],
      maxBatchSize: batching ? sortedUnique([...(lists.maxBatchSizes ?? powersOfTwoUpTo(DEFAULT_MAX_BATCH_SIZE)), start.maxBatchSize]) : [0],
      maxQueueDelayUs: batching ? sortedUnique([...(lists.queueDelaysUs ?? DEFAULT_QUEUE_DELAYS_US), ...startDelay]) : [undefined],
      preferredBatchSize: batching ? sortedUnique([...(lists.preferredBatchSizes ?? [0]), ...startPreferred]) : [0],
    };
  });
}

/** Number of values per dimension, in coordinate order. */
export function dimensionSizes(space: SearchSpace): number[] {
  return [space.instanceCount.length, space.intraOpThreads.length, space.maxBatchSize.length, space.maxQueueDelayUs.length, space.preferredBatchSize.length];
}

/** The dimension names, in coordinate order (for messages). */
const DIMENSION_NAMES = ["instance count", "intra-op threads", "max batch size", "max queue delay", "preferred batch size"] as const;

/** The settings at a coordinate, in canonical form. Throws for an index outside its dimension. */
export function settingsAt(space: SearchSpace, coordinate: Coordinate): TunedSettings {
  const pick = <T>(values: readonly T[], dimension: number): T => {
    const index = coordinate[dimension]!;
    if (!(index >= 0 && index < values.length)) throw new RangeError(`index ${index} is outside ${DIMENSION_NAMES[dimension]} (${values.length} values)`);
    return values[index]!;
  };
  const maxBatchSize = pick(space.maxBatchSize, 2);
  const delay = pick(space.maxQueueDelayUs, 3);
  const preferred = pick(space.preferredBatchSize, 4);
  return canonicalSettings({
    device: space.device,
    instanceCount: pick(space.instanceCount, 0),
    intraOpThreads: pick(space.intraOpThreads, 1),
    maxBatchSize,
    dynamicBatching: delay === undefined ? undefined : { maxQueueDelayUs: delay, preferredBatchSizes: preferred > 0 ? [preferred] : [] },
  });
}

/**
 * The constraint filter on generated candidates: CPU instances never ask for more threads in total than there are
 * cores (they would only take turns on them), and a preferred batch size never exceeds the max batch size.
 */
function isValidCandidate(settings: TunedSettings, cores: number): boolean {
  if (settings.device.kind === "KIND_CPU" && settings.instanceCount * (settings.intraOpThreads ?? 1) > cores) return false;
  return (settings.dynamicBatching?.preferredBatchSizes ?? []).every((size) => size <= settings.maxBatchSize);
}

/** Whether a coordinate lies inside the space and passes the constraint filter. */
export function isValidCoordinate(space: SearchSpace, coordinate: Coordinate): boolean {
  const sizes = dimensionSizes(space);
  if (coordinate.length !== sizes.length || coordinate.some((index, dimension) => !Number.isInteger(index) || index < 0 || index >= sizes[dimension]!)) return false;
  return isValidCandidate(settingsAt(space, coordinate), space.cores);
}

function nearestIndex(values: readonly (number | undefined)[], target: number | undefined): number {
  let best = 0;
  let bestDistance = Infinity;
  values.forEach((value, index) => {
    const distance = value === target ? 0 : value === undefined || target === undefined ? Infinity : Math.abs(value - target);
    if (distance < bestDistance) {
      best = index;
      bestDistance = distance;
    }
  });
  return best;
}

/** The coordinate whose values are nearest the given settings in every dimension (where the quick walk starts). */
export function nearestCoordinate(space: SearchSpace, settings: TunedSettings): number[] {
  const preferred = settings.dynamicBatching?.preferredBatchSizes ?? [];
  return [
    nearestIndex(space.instanceCount, settings.instanceCount),
    nearestIndex(space.intraOpThreads, settings.intraOpThreads),
    nearestIndex(space.maxBatchSize, settings.maxBatchSize),
    nearestIndex(space.maxQueueDelayUs, settings.dynamicBatching?.maxQueueDelayUs),
    nearestIndex(space.preferredBatchSize, preferred.length === 1 ? preferred[0] : 0),
  ];
}
