import type { ModelConfig } from "./model-config";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "./model-signature";
import type { ModelStatistics } from "./model-statistics";
import type { Scheduler } from "./scheduler";
import type { SequenceTracker } from "./sequence-control";

/** A loaded, servable model version: its completed config, instances, scheduler and statistics. */
export interface ModelVersion {
  readonly name: string;
  readonly version: number;
  readonly config: ModelConfig;
  readonly signature: ModelSignature;
  readonly pool: InstancePool;
  readonly scheduler: Scheduler;
  readonly statistics: ModelStatistics;
  /** Present for models with sequence_batching. */
  readonly sequences: SequenceTracker | undefined;
}

export type ModelState = "READY" | "UNAVAILABLE" | "LOADING" | "UNLOADING";

/** One row of the repository index: a version, or the whole model when it failed before versions were known. */
export interface ModelIndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state: ModelState;
  readonly reason: string;
}
