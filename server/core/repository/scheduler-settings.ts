import type { ModelConfig, ModelQueuePolicy } from "../model-config/model-config";
import type { QueuePolicy, SchedulerSettings } from "../scheduling/scheduler";

function queuePolicy(policy: ModelQueuePolicy | undefined): QueuePolicy {
  return {
    timeoutAction: policy?.timeout_action === "DELAY" ? "DELAY" : "REJECT",
    defaultTimeoutUs: policy?.default_timeout_microseconds ?? 0,
    allowTimeoutOverride: policy?.allow_timeout_override ?? false,
    maxQueueSize: policy?.max_queue_size ?? 0,
  };
}

/** Triton's scheduler choice: the dynamic batcher when configured, else one request per execution. */
export function schedulerSettings(config: ModelConfig): SchedulerSettings {
  const sequence = config.sequence_batching;
  if (sequence !== undefined) {
    // Different sequences batch together; one sequence's requests never share a batch (the tracker orders them).
    const strategy = sequence.oldest ?? sequence.direct;
    return {
      batch: {
        maxBatchSize: Math.max(1, config.max_batch_size),
        preferredBatchSizes: sequence.oldest?.preferred_batch_size.map(Number) ?? [],
        maxQueueDelayUs: strategy?.max_queue_delay_microseconds ?? 0,
      },
      levels: [queuePolicy(undefined)], defaultLevel: 1, preserveOrdering: sequence.oldest?.preserve_ordering ?? false,
    };
  }
  const batching = config.dynamic_batching;
  if (batching === undefined) {
    return { batch: { maxBatchSize: 1, preferredBatchSizes: [], maxQueueDelayUs: 0 }, levels: [queuePolicy(undefined)], defaultLevel: 1, preserveOrdering: false };
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
    levels, defaultLevel, preserveOrdering: batching.preserve_ordering,
  };
}
