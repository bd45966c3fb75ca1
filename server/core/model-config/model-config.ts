/**
 * Triton's model configuration (`config.pbtxt`, `inference.ModelConfig` in `protocol/proto/model_config.proto`)
 * as typed data for the rest of the server.
 *
 * A `ModelConfig` is fully defaulted, exactly as proto3 reads the message: field names are the proto's
 * (snake_case, so the object is its own JSON), every scalar is present with its default, repeated fields
 * are arrays, maps are objects with string keys, enums are their value names (`"TYPE_FP32"`), 64-bit
 * integers are JS numbers. An unset message field or oneof member is absent, so a config with
 * `dynamic_batching { }` has `dynamic_batching` (all defaults) and one without has none.
 *
 * A `ModelConfig` is also a valid protobufjs plain object: `modelConfigSchema().modelConfigType.fromObject`
 * (or @grpc/proto-loader with `keepCase: true`) encodes it as Triton's wire message.
 *
 * A config goes through named steps, each a pure function of its own module: parse (text or JSON to a
 * protobufjs message, ./parse.ts), defaults (the message to a `ModelConfig`, ./defaults.ts), validate
 * (./validate.ts), normalize (backend fields and instance groups, ./normalize.ts) and auto-complete (from
 * what the model file declares, ./auto-complete.ts); ./config-json.ts prints it as Triton's JSON.
 */
import type { ConfigDataType } from "../../../protocol/datatypes";

export interface ModelRateLimiterResource {
  name: string;
  global: boolean;
  count: number;
}

export interface ModelRateLimiter {
  resources: ModelRateLimiterResource[];
  priority: number;
}

export type ModelInstanceGroupKind = "KIND_AUTO" | "KIND_GPU" | "KIND_CPU" | "KIND_MODEL";

export interface ModelInstanceGroupSecondaryDevice {
  kind: "KIND_NVDLA";
  device_id: number;
}

export interface ModelInstanceGroup {
  name: string;
  kind: ModelInstanceGroupKind;
  count: number;
  rate_limiter?: ModelRateLimiter;
  gpus: number[];
  secondary_devices: ModelInstanceGroupSecondaryDevice[];
  profile: string[];
  passive: boolean;
  host_policy: string;
}

export interface ModelTensorReshape {
  shape: number[];
}

export type ModelInputFormat = "FORMAT_NONE" | "FORMAT_NHWC" | "FORMAT_NCHW";

export interface ModelInput {
  name: string;
  data_type: ConfigDataType;
  format: ModelInputFormat;
  /** Shape without the batch dimension; -1 is variable. */
  dims: number[];
  reshape?: ModelTensorReshape;
  is_shape_tensor: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
  is_non_linear_format_io: boolean;
}

export interface ModelOutput {
  name: string;
  data_type: ConfigDataType;
  dims: number[];
  reshape?: ModelTensorReshape;
  label_filename: string;
  is_shape_tensor: boolean;
  is_non_linear_format_io: boolean;
}

export type BatchInputKind =
  | "BATCH_ELEMENT_COUNT"
  | "BATCH_ACCUMULATED_ELEMENT_COUNT"
  | "BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO"
  | "BATCH_MAX_ELEMENT_COUNT_AS_SHAPE"
  | "BATCH_ITEM_SHAPE"
  | "BATCH_ITEM_SHAPE_FLATTEN";

export interface BatchInput {
  kind: BatchInputKind;
  target_name: string[];
  data_type: ConfigDataType;
  source_input: string[];
}

export interface BatchOutput {
  target_name: string[];
  kind: "BATCH_SCATTER_WITH_INPUT_SHAPE";
  source_input: string[];
}

/** A oneof: at most one member is present; none means "latest, 1 version". */
export interface ModelVersionPolicy {
  latest?: { num_versions: number };
  all?: Record<string, never>;
  specific?: { versions: number[] };
}

export interface ModelOptimizationGraph {
  level: number;
}

export type ModelPriority = "PRIORITY_DEFAULT" | "PRIORITY_MAX" | "PRIORITY_MIN";

export interface CudaGraphShape {
  dim: number[];
}

export interface CudaGraphLowerBound {
  batch_size: number;
  input: Record<string, CudaGraphShape>;
}

export interface CudaGraphSpec {
  batch_size: number;
  input: Record<string, CudaGraphShape>;
  graph_lower_bound?: CudaGraphLowerBound;
}

export interface ModelOptimizationCuda {
  graphs: boolean;
  busy_wait_events: boolean;
  graph_spec: CudaGraphSpec[];
  output_copy_stream: boolean;
}

export interface ExecutionAccelerator {
  name: string;
  parameters: Record<string, string>;
}

export interface ExecutionAccelerators {
  gpu_execution_accelerator: ExecutionAccelerator[];
  cpu_execution_accelerator: ExecutionAccelerator[];
}

export interface PinnedMemoryBuffer {
  enable: boolean;
}

export interface ModelOptimizationPolicy {
  graph?: ModelOptimizationGraph;
  priority: ModelPriority;
  cuda?: ModelOptimizationCuda;
  execution_accelerators?: ExecutionAccelerators;
  input_pinned_memory?: PinnedMemoryBuffer;
  output_pinned_memory?: PinnedMemoryBuffer;
  gather_kernel_buffer_threshold: number;
  eager_batching: boolean;
}

export type QueueTimeoutAction = "REJECT" | "DELAY";

export interface ModelQueuePolicy {
  timeout_action: QueueTimeoutAction;
  /** 0 means no timeout. */
  default_timeout_microseconds: number;
  allow_timeout_override: boolean;
  /** 0 means unbounded. */
  max_queue_size: number;
}

export interface ModelDynamicBatching {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
  priority_levels: number;
  default_priority_level: number;
  default_queue_policy?: ModelQueuePolicy;
  /** Keyed by priority level as a decimal string. */
  priority_queue_policy: Record<string, ModelQueuePolicy>;
}

export type SequenceControlKind =
  | "CONTROL_SEQUENCE_START"
  | "CONTROL_SEQUENCE_READY"
  | "CONTROL_SEQUENCE_END"
  | "CONTROL_SEQUENCE_CORRID";

export interface SequenceControl {
  kind: SequenceControlKind;
  /** Each `*_false_true` list holds the false value, then the true value. */
  int32_false_true: number[];
  fp32_false_true: number[];
  bool_false_true: boolean[];
  data_type: ConfigDataType;
}

export interface SequenceControlInput {
  name: string;
  control: SequenceControl[];
}

export interface SequenceInitialState {
  data_type: ConfigDataType;
  dims: number[];
  /** Oneof `state_data`: at most one of `zero_data` and `data_file` is present. */
  zero_data?: boolean;
  data_file?: string;
  name: string;
}

export interface SequenceState {
  input_name: string;
  output_name: string;
  data_type: ConfigDataType;
  dims: number[];
  initial_state: SequenceInitialState[];
  use_same_buffer_for_input_output: boolean;
  use_growable_memory: boolean;
}

export interface SequenceStrategyDirect {
  max_queue_delay_microseconds: number;
  minimum_slot_utilization: number;
}

export interface SequenceStrategyOldest {
  max_candidate_sequences: number;
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
}

export interface ModelSequenceBatching {
  /** Oneof `strategy_choice`: at most one of `direct` and `oldest`; none means direct. */
  direct?: SequenceStrategyDirect;
  oldest?: SequenceStrategyOldest;
  /** 0 means Triton's 1 s default. */
  max_sequence_idle_microseconds: number;
  control_input: SequenceControlInput[];
  state: SequenceState[];
  iterative_sequence: boolean;
}

export interface EnsembleStep {
  model_name: string;
  /** -1 means the latest version. */
  model_version: number;
  /** Step model input name -> ensemble tensor name. */
  input_map: Record<string, string>;
  /** Step model output name -> ensemble tensor name. */
  output_map: Record<string, string>;
  model_namespace: string;
}

export interface ModelEnsembling {
  step: EnsembleStep[];
  max_inflight_requests: number;
}

export interface ModelParameter {
  string_value: string;
}

export interface ModelWarmupInput {
  data_type: ConfigDataType;
  dims: number[];
  /** Oneof `input_data_type`: at most one of the three is present. */
  zero_data?: boolean;
  random_data?: boolean;
  input_data_file?: string;
}

export interface ModelWarmup {
  name: string;
  batch_size: number;
  inputs: Record<string, ModelWarmupInput>;
  /** 0 runs the sample once. */
  count: number;
}

export interface ModelOperations {
  op_library_filename: string[];
}

export interface ModelTransactionPolicy {
  decoupled: boolean;
}

export interface ModelRepositoryAgent {
  name: string;
  parameters: Record<string, string>;
}

export interface ModelRepositoryAgents {
  agents: ModelRepositoryAgent[];
}

export interface ModelResponseCache {
  enable: boolean;
}

export interface MetricControl {
  metric_identifier?: { family: string };
  /** Oneof `metric_options`. */
  histogram_options?: { buckets: number[] };
}

export interface ModelMetrics {
  metric_control: MetricControl[];
}

export interface ModelConfig {
  name: string;
  platform: string;
  backend: string;
  runtime: string;
  version_policy?: ModelVersionPolicy;
  /** 0: no batching, shapes are `dims`; >= 1: shapes are `[-1, ...dims]`. */
  max_batch_size: number;
  input: ModelInput[];
  output: ModelOutput[];
  batch_input: BatchInput[];
  batch_output: BatchOutput[];
  optimization?: ModelOptimizationPolicy;
  /** Oneof `scheduling_choice`: at most one of the three is present; none means one request per execution. */
  dynamic_batching?: ModelDynamicBatching;
  sequence_batching?: ModelSequenceBatching;
  ensemble_scheduling?: ModelEnsembling;
  instance_group: ModelInstanceGroup[];
  default_model_filename: string;
  cc_model_filenames: Record<string, string>;
  metric_tags: Record<string, string>;
  parameters: Record<string, ModelParameter>;
  model_warmup: ModelWarmup[];
  model_operations?: ModelOperations;
  model_transaction_policy?: ModelTransactionPolicy;
  model_repository_agents?: ModelRepositoryAgents;
  response_cache?: ModelResponseCache;
  model_metrics?: ModelMetrics;
}
