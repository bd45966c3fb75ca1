import { existsSync } from "node:fs";
import type { Backend, BackendInstance, InstanceSpec } from "../../backends/backend";
import type { ModelConfig } from "../model-config/model-config";
import { modelConfigToJson } from "../model-config/config-json";
import { modelConfigFromJson } from "../model-config/parse";
import { normalizeInstanceGroups } from "../model-config/normalize";
import { validateInstanceGroups } from "../model-config/validate-instance-groups";
import type { InstanceRestarts } from "../scheduling/instance-pool";
import { planInstances } from "./instance-plan";
import type { ModelDirectory } from "./model-repository";
import type { InstancePlacement } from "./model-version";

/** What placing a version's instances needs of the loader's settings. */
export interface InstanceSettings {
  readonly gpuCount: number;
  /** Whether the GPU counted is a software WebGPU adapter (`--allow-software-gpu`): its placements say so. */
  readonly softwareGpu?: boolean;
  readonly cpuCount: number;
  /** Intra-op threads per instance; undefined sizes them to the cores and the model's instance count. */
  readonly intraOpThreads: number | undefined;
  /** Where loads report which device and provider each version's instances run on, KIND_AUTO's CPU fallback and restarts. */
  readonly log: InstanceRestarts["log"];
}

/** A KIND_AUTO instance that could not start on the GPU. */
export class AutoGpuUnusable extends Error {}

/** A version's instances as created, where each runs, the spec each slot's instance is (re)created from, and its config. */
export interface CreatedInstances {
  /** The config with its instance groups normalized as the instances were placed. */
  readonly config: ModelConfig;
  readonly instances: BackendInstance[];
  readonly placements: InstancePlacement[];
  readonly specOf: (index: number) => InstanceSpec;
}

function acceleratorsFor(config: ModelConfig, kind: "cpu" | "gpu"): InstanceSpec["accelerators"] {
  const accelerators = config.optimization?.execution_accelerators;
  const list = kind === "gpu" ? accelerators?.gpu_execution_accelerator : accelerators?.cpu_execution_accelerator;
  return (list ?? []).map((a) => ({ name: a.name, parameters: { ...a.parameters } }));
}

function parameterStrings(config: ModelConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.parameters)) out[key] = value.string_value;
  return out;
}

/**
 * Normalizes the instance groups of `declared`, then creates every planned instance of a version; closes the
 * ones already created when one fails. KIND_AUTO means the GPU when `autoOnGpu`; an instance of such a group
 * that fails there fails with {@link AutoGpuUnusable}.
 */
export async function createInstances(
  declared: ModelConfig, directory: ModelDirectory, backend: Backend, version: number, modelPath: string, settings: InstanceSettings, autoOnGpu: boolean,
): Promise<CreatedInstances> {
  const firstGpuOnly = settings.gpuCount > 1 ? backend.firstGpuOnly?.(acceleratorsFor(declared, "gpu")) : undefined;
  const config = normalizeInstanceGroups(declared, {
    gpuCount: settings.gpuCount, autoOnGpu, firstGpuOnly: firstGpuOnly !== undefined, defaultCpuInstanceCount: backend.defaultCpuInstanceCount ?? 1,
  });
  validateInstanceGroups(config, settings.gpuCount);
  if (backend.requiresModelFile === true && !existsSync(modelPath)) throw new Error(`model file ${modelPath} not found`);
  const plans = planInstances(config);
  const intraOpThreads = settings.intraOpThreads ?? Math.max(1, Math.floor(settings.cpuCount / plans.length));
  const modelConfig = modelConfigToJson(config);
  const specOf = (index: number): InstanceSpec => {
    const plan = plans[index]!;
    return {
      modelName: config.name, modelVersion: version, modelPath, modelDirectory: directory.path, modelConfig,
      instanceName: `${plan.groupName}_${index}`, device: plan.kind, deviceId: plan.deviceId,
      accelerators: acceleratorsFor(config, plan.kind), parameters: parameterStrings(config), intraOpThreads,
      graphOptimizationLevel: config.optimization?.graph?.level ?? 0,
    };
  };
  const declaredAuto = (groupIndex: number): boolean => autoOnGpu && (declared.instance_group[groupIndex]?.kind ?? "KIND_AUTO") === "KIND_AUTO";
  const instances: BackendInstance[] = [];
  try {
    for (const [index, plan] of plans.entries()) {
      try {
        instances.push(await backend.createInstance(specOf(index)));
      } catch (error) {
        throw declaredAuto(plan.groupIndex) ? new AutoGpuUnusable(error instanceof Error ? error.message : String(error)) : error;
      }
    }
  } catch (error) {
    await Promise.allSettled(instances.map((i) => i.close()));
    throw error;
  }
  const placements = instances.map((instance, i): InstancePlacement => ({
    kind: plans[i]!.kind === "gpu" ? "KIND_GPU" : "KIND_CPU", deviceId: plans[i]!.deviceId, provider: instance.executionProvider,
    ...(plans[i]!.kind === "gpu" && settings.softwareGpu === true ? { softwareAdapter: true } : {}),
  }));
  // Groups that listed no GPUs and were held to GPU 0 of several.
  const narrowed = firstGpuOnly !== undefined &&
    config.instance_group.some((group, i) => group.kind === "KIND_GPU" && (declared.instance_group[i]?.gpus.length ?? 0) === 0);
  if (narrowed) {
    settings.log.warn(`model '${config.name}' version ${version}: KIND_GPU instances run on GPU 0 only, not on each of the ${settings.gpuCount} GPUs: ${firstGpuOnly}`);
  }
  return { config, instances, placements, specOf };
}

/**
 * Shows which provider GPU instances landed on where the config named none (KIND_GPU picks one by itself), in
 * Triton's own field for it, so `GET .../config` answers which accelerator serves the model.
 */
export function withGpuProvider(config: ModelConfig, placements: readonly InstancePlacement[]): ModelConfig {
  const provider = placements.find((p) => p.kind === "KIND_GPU" && p.provider !== "cpu")?.provider;
  if (provider === undefined || (config.optimization?.execution_accelerators?.gpu_execution_accelerator.length ?? 0) > 0) return config;
  const named = modelConfigFromJson({ optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: provider }] } } }, "execution provider");
  const optimization = config.optimization === undefined ? named.optimization : { ...config.optimization, execution_accelerators: named.optimization!.execution_accelerators };
  return { ...config, optimization };
}

/** `2 x KIND_CPU on cpu, 1 x KIND_GPU on webgpu (device 0)`, or `(device 0, software adapter)`. */
export function describePlacements(placements: readonly InstancePlacement[]): string {
  const counts = new Map<string, number>();
  for (const p of placements) {
    const key = `${p.kind} on ${p.provider}${p.kind === "KIND_GPU" ? ` (device ${p.deviceId}${p.softwareAdapter === true ? ", software adapter" : ""})` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${count} x ${key}`).join(", ");
}
