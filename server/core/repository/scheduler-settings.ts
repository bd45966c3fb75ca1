import type { ModelConfig, ModelQueuePolicy } from "../model-config/model-config";
import type { QueuePolicy, SchedulerSettings } from "../scheduling/scheduler";
import type { SequenceBatcherSettings } from "../scheduling/sequence-batcher";
import type { ControlInputSpec } from "../scheduling/sequence-control";
import type { StateSpec } from "../scheduling/sequence-state";

function queuePolicy(policy: ModelQueuePolicy | undefined): QueuePolicy {
  return {
    timeoutAction: policy?.timeout_action === "DELAY" ? "DELAY" : "REJECT",
    defaultTimeoutUs: policy?.default_timeout_microseconds ?? 0,
    allowTimeoutOverride: policy?.allow_timeout_override ?? false,
    maxQueueSize: policy?.max_queue_size ?? 0,
  };
}

/**
 * The sequence batcher of a `sequence_batching` model, as Triton's SequenceBatchScheduler::Create sizes it: each
 * instance has max_batch_size slots (at least 1), or oldest's max_candidate_sequences when set.
 */
export function sequenceBatcherSettings(
  config: ModelConfig & { sequence_batching: NonNullable<ModelConfig["sequence_batching"]> }, controls: readonly ControlInputSpec[], states: readonly StateSpec[],
): SequenceBatcherSettings {
  const sequence = config.sequence_batching;
  const maxBatchSize = Math.max(1, config.max_batch_size);
  const oldest = sequence.oldest;
  const slotsPerInstance = oldest !== undefined && oldest.max_candidate_sequences > 0 ? oldest.max_candidate_sequences : maxBatchSize;
  return {
    strategy: oldest !== undefined ? "oldest" : "direct", slotsPerInstance, idleUs: sequence.max_sequence_idle_microseconds, controls, states,
    direct: {
      maxQueueDelayUs: sequence.direct?.max_queue_delay_microseconds ?? 0,
      minimumSlotUtilization: sequence.direct?.minimum_slot_utilization ?? 0,
      slotCount: maxBatchSize,
    },
    oldest: { maxBatchSize, preferredBatchSizes: oldest?.preferred_batch_size.map(Number) ?? [], maxQueueDelayUs: oldest?.max_queue_delay_microseconds ?? 0 },
  };
}

/**
 * Without a dynamic batcher (and not decoupled), how many queued requests one instance may take at once, each its
 * own execution, from a backend that can take them in one hop.
 */
const EXECUTION_GROUP_LIMIT = 8;

/** Triton's scheduler choice for a model without sequence batching: the dynamic batcher when configured, else one request per execution. */
export function schedulerSettings(config: ModelConfig): SchedulerSettings {
  const batching = config.dynamic_batching;
  const decoupled = config.model_transaction_policy?.decoupled === true;
  if (batching === undefined) {
    const groupLimit = decoupled ? 1 : EXECUTION_GROUP_LIMIT;
    return { batch: { maxBatchSize: 1, preferredBatchSizes: [], maxQueueDelayUs: 0 }, levels: [queuePolicy(undefined)], defaultLevel: 1, preserveOrdering: false, groupLimit, decoupled };
  }
  const levelCount = Math.max(1, batching.priority_levels);
  // validateModelConfig has checked the default level against the levels.
  const defaultLevel = batching.priority_levels > 0 ? batching.default_priority_level : 1;
  const levels = Array.from({ length: levelCount }, (_, i) => queuePolicy(batching.priority_queue_policy[String(i + 1)] ?? batching.default_queue_policy));
  return {
    batch: {
      maxBatchSize: Math.max(1, config.max_batch_size),
      preferredBatchSizes: batching.preferred_batch_size.map(Number),
      maxQueueDelayUs: batching.max_queue_delay_microseconds,
    },
    levels, defaultLevel, preserveOrdering: batching.preserve_ordering, groupLimit: 1, decoupled,
  };
}
