import { describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../../server/core/model-config/parse";
import { schedulerSettings } from "../../../../server/core/repository/scheduler-settings";

const settingsOf = (text: string) => schedulerSettings(parseModelConfigText(`name: "m"\n${text}`, "config.pbtxt"));

/**
 * The config fields a model's dynamic batcher runs under: its rules are unit tested on these settings
 * (tests/server/core/scheduling/scheduler-rules.test.ts), so each field must reach them.
 */
describe("schedulerSettings", () => {
  it("carries every dynamic_batching field; a priority_queue_policy replaces the default policy for its level (Triton's PriorityQueue)", () => {
    expect(settingsOf(`max_batch_size: 8
dynamic_batching {
  preferred_batch_size: [ 2, 6 ] max_queue_delay_microseconds: 100 preserve_ordering: true
  priority_levels: 2 default_priority_level: 2
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 20000 max_queue_size: 3 }
  priority_queue_policy { key: 1 value: { allow_timeout_override: true default_timeout_microseconds: 5 } }
}`)).toEqual({
      batch: { maxBatchSize: 8, preferredBatchSizes: [2, 6], maxQueueDelayUs: 100 },
      levels: [
        { timeoutAction: "REJECT", defaultTimeoutUs: 5, allowTimeoutOverride: true, maxQueueSize: 0 },
        { timeoutAction: "DELAY", defaultTimeoutUs: 20_000, allowTimeoutOverride: false, maxQueueSize: 3 },
      ],
      defaultLevel: 2, preserveOrdering: true, groupLimit: 1, decoupled: false,
    });
  });

  it.each([
    { name: "a model", text: "max_batch_size: 8", groupLimit: 8, decoupled: false },
    { name: "a decoupled model", text: "max_batch_size: 8\nmodel_transaction_policy { decoupled: true }", groupLimit: 1, decoupled: true },
  ])("without dynamic_batching, $name runs one request per execution, at most $groupLimit handed over at once, under no queue policy", ({ text, groupLimit, decoupled }) => {
    expect(settingsOf(text)).toEqual({
      batch: { maxBatchSize: 1, preferredBatchSizes: [], maxQueueDelayUs: 0 },
      levels: [{ timeoutAction: "REJECT", defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0 }],
      defaultLevel: 1, preserveOrdering: false, groupLimit, decoupled,
    });
  });
});
