/**
 * Bodies of the KServe v2 / Triton endpoints other than infer, with field names exactly as on the wire
 * (snake_case where Triton uses it), so code written against Triton's JSON reads the same here.
 */
import type { DataType } from "../protocol/datatypes";

/** `GET /v2`. */
export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

/** One input or output in model metadata; `-1` marks a variable dimension (the batch dimension included). */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
}

/** `GET /v2/models/{m}[/versions/{v}]`. */
export interface ModelMetadata {
  readonly name: string;
  readonly versions?: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** An input or output of a model configuration. */
export interface ModelConfigTensor {
  readonly name: string;
  readonly data_type: string;
  readonly dims: readonly number[];
  readonly is_shape_tensor?: boolean;
  readonly optional?: boolean;
  readonly [field: string]: unknown;
}

/**
 * `GET /v2/models/{m}[/versions/{v}]/config`: Triton's ModelConfig as JSON. The fields tools rely on are typed;
 * the rest of the message is there too, untyped.
 */
export interface ModelConfig {
  readonly name: string;
  readonly platform?: string;
  readonly backend?: string;
  readonly max_batch_size: number;
  readonly input: readonly ModelConfigTensor[];
  readonly output: readonly ModelConfigTensor[];
  readonly dynamic_batching?: { readonly max_queue_delay_microseconds?: number; readonly [field: string]: unknown };
  readonly sequence_batching?: Readonly<Record<string, unknown>>;
  readonly ensemble_scheduling?: Readonly<Record<string, unknown>>;
  readonly instance_group?: readonly { readonly count: number; readonly kind: string; readonly [field: string]: unknown }[];
  readonly model_transaction_policy?: { readonly decoupled?: boolean };
  readonly [field: string]: unknown;
}

/** Triton's `$duration_stat`: how many, and their total duration. */
export interface DurationStat {
  readonly count: number;
  readonly ns: number;
}

export interface BatchStat {
  readonly batch_size: number;
  readonly compute_input: DurationStat;
  readonly compute_infer: DurationStat;
  readonly compute_output: DurationStat;
}

export interface InferenceStats {
  readonly success: DurationStat;
  readonly fail: DurationStat;
  readonly queue: DurationStat;
  readonly compute_input: DurationStat;
  readonly compute_infer: DurationStat;
  readonly compute_output: DurationStat;
  readonly cache_hit: DurationStat;
  readonly cache_miss: DurationStat;
}

/** One entry of `GET /v2/models[/{m}[/versions/{v}]]/stats` `model_stats`; counters are cumulative. */
export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  /** Milliseconds since the epoch; 0 before the first inference. */
  readonly last_inference: number;
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: InferenceStats;
  readonly batch_stats: readonly BatchStat[];
  readonly response_stats?: Readonly<Record<string, unknown>>;
  readonly memory_usage?: readonly { readonly type: string; readonly id: number; readonly byte_size: number }[];
}

/** `GET /v2/logging` (Triton's logging extension): the server's log settings. */
export interface LogSettings {
  readonly log_file: string;
  readonly log_info: boolean;
  readonly log_warning: boolean;
  readonly log_error: boolean;
  readonly log_verbose_level: number;
  readonly log_format: "default" | "ISO8601" | (string & {});
}

/** One entry of `POST /v2/repository/index`. */
export interface RepositoryIndexEntry {
  readonly name: string;
  readonly version?: string;
  readonly state: "READY" | "UNAVAILABLE" | "LOADING" | "UNLOADING" | (string & {});
  readonly reason: string;
}
