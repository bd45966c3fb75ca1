import type { ModelConfig } from "../model-config/model-config";
import type { InstancePool } from "../scheduling/instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ModelStatistics } from "./model-statistics";
import type { RequestScheduler } from "../scheduling/request-scheduler";

/** Where one instance runs: what the config planned and the provider the backend reports. */
export interface InstancePlacement {
  readonly kind: "KIND_CPU" | "KIND_GPU";
  readonly deviceId: number;
  readonly provider: string;
  /** Present on a KIND_GPU instance whose GPU is a software WebGPU adapter (`--allow-software-gpu`). */
  readonly softwareAdapter?: true;
}

/** A loaded, servable model version: its completed config, instances (none for an ensemble), scheduler and statistics. */
export interface ModelVersion {
  readonly name: string;
  readonly version: number;
  readonly config: ModelConfig;
  readonly signature: ModelSignature;
  readonly pool: InstancePool;
  /** Where each instance of the pool runs (empty for an ensemble). */
  readonly placements: readonly InstancePlacement[];
  readonly scheduler: RequestScheduler;
  readonly statistics: ModelStatistics;
}

export type ModelState = "READY" | "UNAVAILABLE" | "LOADING" | "UNLOADING";

/** One row of the repository index: a version, or the whole model when it failed before versions were known. */
export interface ModelIndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state: ModelState;
  readonly reason: string;
}
