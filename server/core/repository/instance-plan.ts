import type { ModelConfig } from "../model-config/model-config";

/** One instance to create: where it runs, and the (normalized) instance group it comes from. */
export interface InstancePlan {
  readonly kind: "cpu" | "gpu";
  readonly deviceId: number;
  readonly groupName: string;
  /** Index of the group in the config's `instance_group`. */
  readonly groupIndex: number;
}

/**
 * One plan per instance of a config whose instance groups are normalized (normalizeInstanceGroups): `count`
 * instances of a KIND_CPU group, `count` on each GPU a KIND_GPU group lists.
 */
export function planInstances(config: ModelConfig): InstancePlan[] {
  return config.instance_group.flatMap((group, groupIndex) => {
    const devices = group.kind === "KIND_GPU" ? group.gpus.map((gpu) => ({ kind: "gpu" as const, deviceId: gpu })) : [{ kind: "cpu" as const, deviceId: 0 }];
    return devices.flatMap((device) => Array.from({ length: group.count }, () => ({ ...device, groupName: group.name, groupIndex })));
  });
}
