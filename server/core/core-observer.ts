import type { InstancePlacement } from "./repository/model-version";

/**
 * The side channel metrics listen on. The core calls these synchronously on the hot path, so implementations
 * only bump counters; they never throw and never block.
 */
export type FailureReason = "REJECTED" | "CANCELED" | "BACKEND" | "OTHER";

export interface RequestOutcome {
  readonly modelName: string;
  readonly modelVersion: string;
  /** Undefined on success. */
  readonly failureReason: FailureReason | undefined;
  readonly requestNs: number;
  readonly queueNs: number;
  /** For a model using the response cache: whether this request hit, and the cache's share of its time. */
  readonly cache?: { readonly hit: boolean; readonly ns: number };
}

export interface ExecutionOutcome {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly batchSize: number;
  readonly requestCount: number;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

export interface CoreObserver {
  requestCompleted(outcome: RequestOutcome): void;
  executionCompleted(outcome: ExecutionOutcome): void;
}

/** Point-in-time gauges of one model version, read when metrics are scraped. */
export interface ModelGauges {
  readonly modelName: string;
  readonly modelVersion: string;
  /** Requests accepted and not yet executing (Triton's nv_inference_pending_request_count). */
  readonly pendingRequests: number;
  /** Requests waiting in the scheduler queue, excluding delayed (timed-out, DELAY policy) ones. */
  readonly queueDepth: number;
  /** Instances alive now; one whose worker died counts again once its replacement is up. */
  readonly instanceCount: number;
  readonly instanceBusySeconds: number;
  /** Where each instance runs: kind, execution provider, device. */
  readonly placements: readonly InstancePlacement[];
  /** Instances that died on their own (worker crash, exit, out of memory) and were restarted, since load. */
  readonly instanceRestarts: number;
}
