/** A predefined Compute Engine machine type's family, shape and vCPUs, read from its name. */
export interface MachineShape {
  readonly family: string;
  /** `standard`, `highmem`, `highcpu`, `megamem`... */
  readonly shape: string;
  readonly vcpus: number;
}

/**
 * `n1-standard-8` is n1, standard, 8 vCPUs: a predefined type's name ends in its vCPU count (Compute Engine docs,
 * "Machine families resource and comparison guide", https://cloud.google.com/compute/docs/machine-resource).
 * Undefined for any other name; the stack's config admits only this form.
 */
export function parseMachineType(machineType: string): MachineShape | undefined {
  const match = /^([a-z0-9]+)-([a-z]+)-(\d+)$/.exec(machineType);
  return match === null ? undefined : { family: match[1]!, shape: match[2]!, vcpus: Number(match[3]) };
}
