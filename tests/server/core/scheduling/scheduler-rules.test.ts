import { describe, expect, it } from "vitest";
import type { BackendExecution, BackendInstance, ExecutionTimes } from "../../../../server/backends/backend";
import { gatherInputs, scatterOutputs } from "../../../../server/backends/batch-io";
import { InferenceError } from "../../../../server/core/errors";
import type { ModelSignature } from "../../../../server/core/model-config/model-signature";
import type { ValidatedRequest } from "../../../../server/core/request/request-validation";
import type { BatchPolicy } from "../../../../server/core/scheduling/batcher";
import type { SchedulerClock, TimerHandle } from "../../../../server/core/scheduling/clock";
import { InstancePool } from "../../../../server/core/scheduling/instance-pool";
import type { ScheduleOptions } from "../../../../server/core/scheduling/request-scheduler";
import { type QueuePolicy, Scheduler, type SchedulerSettings } from "../../../../server/core/scheduling/scheduler";
import { int32, int32Values } from "../../../helpers/int32-tensors";
import { scheduled } from "../../../helpers/scheduled-request";

/**
 * Triton's dynamic batcher rules, on a real Scheduler with its InstancePool and PriorityQueue, driven by a clock that
 * moves only when a test says: each test states the exact µs at which every batch goes to an instance and every
 * request is answered, without sleeping. The backend (the seam to what computes) is the only test double. The rules
 * are those of triton-inference-server/core: src/dynamic_batch_scheduler.cc (GetDynamicBatch; preserve_ordering's
 * delegated responses) and src/scheduler_utils.cc (PriorityQueue, PolicyQueue::Enqueue and ApplyPolicy).
 */

/** Lets every promise chain the scheduler started run to its end (the clock stands still meanwhile). */
async function quiesce(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface FakeTimer {
  readonly atNs: bigint;
  readonly callback: () => void;
}

/** Starts at 0; its timers fire only as {@link advanceTo} passes their time, in time order. */
class FakeClock implements SchedulerClock {
  #ns = 0n;
  #lastHandle = 0;
  readonly #timers = new Map<TimerHandle, FakeTimer>();

  now(): bigint {
    return this.#ns;
  }

  nowUs(): number {
    return Number(this.#ns / 1000n);
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    const handle = ++this.#lastHandle;
    this.#timers.set(handle, { atNs: this.#ns + BigInt(Math.round(ms * 1e6)), callback });
    return handle;
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete(handle);
  }

  /** Moves to `us`, stopping at each timer due on the way (at the time it was set for), and lets the scheduler react. */
  async advanceTo(us: number): Promise<void> {
    const targetNs = BigInt(us) * 1000n;
    if (targetNs < this.#ns) throw new Error(`the clock is at ${this.nowUs()} µs, past ${us}`);
    await quiesce();
    for (let due = this.#nextDue(targetNs); due !== undefined; due = this.#nextDue(targetNs)) {
      this.#timers.delete(due[0]);
      this.#ns = due[1].atNs;
      due[1].callback();
      await quiesce();
    }
    this.#ns = targetNs;
    await quiesce();
  }

  #nextDue(targetNs: bigint): [TimerHandle, FakeTimer] | undefined {
    let earliest: [TimerHandle, FakeTimer] | undefined;
    for (const entry of this.#timers) {
      if (entry[1].atNs <= targetNs && (earliest === undefined || entry[1].atNs < earliest[1].atNs)) earliest = entry;
    }
    return earliest;
  }
}

/** One execution as the backend got it: when, on which instance, and its requests in batch order. */
interface Batch {
  readonly atUs: number;
  readonly instance: number;
  readonly requests: readonly number[];
}


/**
 * The backend double: every element of a request holds the request's id, so a batch's rows tell which requests it
 * holds. Echoes INPUT as OUTPUT, and keeps each execution running until the test finishes it, as a real instance
 * is busy while it computes.
 */
class HeldInstance implements BackendInstance {
  readonly io = undefined;
  readonly executionThread = "main";
  readonly executionProvider = "cpu";
  readonly groupsExecutions = false;
  readonly #index: number;
  readonly #clock: FakeClock;
  readonly #batches: Batch[];
  #running: (() => void) | undefined;

  constructor(index: number, clock: FakeClock, batches: Batch[]) {
    this.#index = index;
    this.#clock = clock;
    this.#batches = batches;
  }

  async execute([requests]: readonly BackendExecution[]): Promise<ExecutionTimes[]> {
    const input = (await gatherInputs(requests!)).get("INPUT")!;
    const ids = int32Values(input.data).filter((_, i) => i % input.shape[1]! === 0);
    this.#batches.push({ atUs: this.#clock.nowUs(), instance: this.#index, requests: ids.filter((id, row) => row === 0 || id !== ids[row - 1]) });
    await new Promise<void>((resolve) => (this.#running = resolve));
    scatterOutputs(new Map([["OUTPUT", input]]), requests!);
    const now = process.hrtime.bigint();
    return [{ startNs: now, endNs: now, computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 }];
  }

  finish(): void {
    const running = this.#running;
    if (running === undefined) throw new Error(`instance ${this.#index} runs nothing`);
    this.#running = undefined;
    running();
  }

  async close(): Promise<void> {}
}

/** An identity model whose only input and output take any row width, so that requests may differ in shape. */
const SIGNATURE: ModelSignature = {
  maxBatchSize: 8,
  inputs: [{ name: "INPUT", datatype: "INT32", dims: [-1], reshape: undefined, optional: false, labels: undefined }],
  outputs: [{ name: "OUTPUT", datatype: "INT32", dims: [-1], reshape: undefined, optional: false, labels: undefined }],
  controls: [],
};

/** Request `id`: `rows` batch elements of `width` values, each the id. */
function request(id: number, rows: number, width: number): ValidatedRequest {
  return {
    batchSize: rows, shapeKey: `INPUT:${width}`, outputs: [{ name: "OUTPUT" }],
    inputs: new Map([["INPUT", { name: "INPUT", datatype: "INT32", shape: [rows, width], data: int32(new Array<number>(rows * width).fill(id)) }]]),
  };
}

/** When a request was answered; `error` as `CODE message` when it failed. */
interface Answer {
  readonly id: number;
  readonly atUs: number;
  readonly error?: string;
}

const QUEUE_POLICY: QueuePolicy = { timeoutAction: "REJECT", defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0 };

interface ModelOptions {
  readonly batch?: Partial<BatchPolicy>;
  /** Per priority level, from level 1; each over Triton's default queue policy. */
  readonly levels?: readonly Partial<QueuePolicy>[];
  readonly defaultLevel?: number;
  readonly preserveOrdering?: boolean;
  readonly instances?: number;
}

interface SendOptions extends Omit<ScheduleOptions, "sink" | "times"> {
  readonly rows?: number;
  readonly width?: number;
}

/** A model version's scheduler as the loader builds it (max_batch_size 8, no preferred sizes, no delay by default). */
function model(options: ModelOptions = {}) {
  const clock = new FakeClock();
  const batches: Batch[] = [];
  const answers: Answer[] = [];
  const instances = Array.from({ length: options.instances ?? 1 }, (_, i) => new HeldInstance(i, clock, batches));
  const settings: SchedulerSettings = {
    batch: { maxBatchSize: 8, preferredBatchSizes: [], maxQueueDelayUs: 0, ...options.batch },
    levels: (options.levels ?? [{}]).map((level) => ({ ...QUEUE_POLICY, ...level })),
    defaultLevel: options.defaultLevel ?? 1,
    preserveOrdering: options.preserveOrdering ?? false,
    groupLimit: 1,
    decoupled: false,
  };
  const scheduler = new Scheduler(SIGNATURE, settings, new InstancePool(instances), { executed: () => undefined }, clock);

  /** Enqueues request `id` now and records its answer, checking that a success carries exactly its own rows. */
  const send = (id: number, { rows = 1, width = 1, ...schedule }: SendOptions = {}): void => {
    void scheduled(scheduler, request(id, rows, width), schedule).then(
      ({ outputs }) => {
        const own = outputs.length === 1 && outputs[0]!.shape.join() === `${rows},${width}` && int32Values(outputs[0]!.data).every((v) => v === id);
        answers.push(own ? { id, atUs: clock.nowUs() } : { id, atUs: clock.nowUs(), error: "not its own rows" });
      },
      (error: unknown) => {
        answers.push({ id, atUs: clock.nowUs(), error: error instanceof InferenceError ? `${error.code} ${error.message}` : String(error) });
      },
    );
  };
  /** Instance `index` completes its execution now. */
  const finish = async (index = 0): Promise<void> => {
    instances[index]!.finish();
    await quiesce();
  };
  return { clock, batches, answers, send, finish, scheduler };
}

describe("dynamic batcher: preferred sizes, max_queue_delay_microseconds, max_batch_size (GetDynamicBatch)", () => {
  it("holds a batch below every preferred size for exactly max_queue_delay_microseconds from its oldest request, then sends it", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { preferredBatchSizes: [4], maxQueueDelayUs: 10_000 } });
    send(1);
    await clock.advanceTo(3_000);
    send(2, { rows: 2 }); // 3 elements: still no preferred size
    await clock.advanceTo(9_999);
    expect(batches).toEqual([]);
    await clock.advanceTo(10_000);
    expect(batches).toEqual([{ atUs: 10_000, instance: 0, requests: [1, 2] }]);
    await clock.advanceTo(12_000);
    await finish();
    expect(answers).toEqual([{ id: 1, atUs: 12_000 }, { id: 2, atUs: 12_000 }]);
  });

  it("stamps the request's own times on the scheduler's clock: its queue time is exactly what it waited for its batch", async () => {
    const { clock, scheduler, finish } = model({ batch: { preferredBatchSizes: [4], maxQueueDelayUs: 10_000 } });
    await clock.advanceTo(1_000);
    const answer = scheduled(scheduler, request(1, 1, 1));
    await clock.advanceTo(11_000);
    await clock.advanceTo(12_000);
    await finish();
    const { times } = await answer;
    expect(times.queueStartNs).toBe(1_000_000n);
    expect(times.computeStartNs).toBe(11_000_000n);
    expect(times.queueNs).toBe(10_000_000);
  });

  it("sends at once when the queue makes a preferred size, before the delay is over", async () => {
    const { clock, batches, send } = model({ batch: { preferredBatchSizes: [2, 6], maxQueueDelayUs: 10_000 } });
    send(1);
    await clock.advanceTo(4_000);
    send(2);
    await clock.advanceTo(5_000);
    expect(batches).toEqual([{ atUs: 4_000, instance: 0, requests: [1, 2] }]);
  });

  it("never grows a batch past the largest preferred size: 3 then 4 with preferred [2, 6] run as 3, then 4 + 2 (Triton's qa/L0_batcher multi_batch_sum_gt_max_preferred)", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { preferredBatchSizes: [2, 6], maxQueueDelayUs: 120_000_000 } });
    send(1, { rows: 6 }); // preferred 6: runs at once and keeps the only instance busy
    await clock.advanceTo(100);
    send(2, { rows: 3 });
    await clock.advanceTo(200);
    send(3, { rows: 4 });
    await clock.advanceTo(300);
    send(4, { rows: 2 });
    await clock.advanceTo(1_000);
    await finish();
    // 3 + 4 would pass the largest preferred size: the 3 goes alone, at once, far within the delay.
    await clock.advanceTo(2_000);
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 1_000, instance: 0, requests: [2] },
      { atUs: 2_000, instance: 0, requests: [3, 4] },
    ]);
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
  });

  it("fills a batch up to max_batch_size, whole requests only; the request that would pass it waits for the next batch", async () => {
    const { clock, batches, send, finish } = model();
    send(1);
    send(2, { rows: 3 });
    send(3, { rows: 3 });
    send(4, { rows: 3 });
    await clock.advanceTo(10);
    await finish();
    await clock.advanceTo(20);
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 10, instance: 0, requests: [2, 3] },
      { atUs: 20, instance: 0, requests: [4] },
    ]);
  });

  it("without dynamic batching (max_batch_size 1 to the scheduler): one request per execution, its own batch elements kept together", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { maxBatchSize: 1 } });
    send(1, { rows: 2 });
    send(2);
    send(3, { rows: 3 });
    await clock.advanceTo(10);
    await finish();
    await clock.advanceTo(20);
    await finish();
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 10, instance: 0, requests: [2] },
      { atUs: 20, instance: 0, requests: [3] },
    ]);
    expect(answers).toEqual([{ id: 1, atUs: 10 }, { id: 2, atUs: 20 }, { id: 3, atUs: 20 }]);
  });

  it("multiple shapes: never batches requests whose non-batch dimensions differ, and sends a batch at once when the next request's shape differs", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { preferredBatchSizes: [2, 6], maxQueueDelayUs: 10_000 } });
    send(1, { rows: 2, width: 4 }); // preferred 2: runs at once
    await clock.advanceTo(100);
    send(2, { width: 16 });
    await clock.advanceTo(200);
    send(3, { width: 8 });
    await clock.advanceTo(300);
    send(4, { width: 16 });
    await clock.advanceTo(1_000);
    await finish();
    await clock.advanceTo(2_000);
    await finish();
    await clock.advanceTo(3_000);
    await finish();
    // Request 4 is alone in its shape: it waits the queue delay from its own arrival (300 µs).
    await clock.advanceTo(10_299);
    expect(batches).toHaveLength(3);
    await clock.advanceTo(10_300);
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 1_000, instance: 0, requests: [2] },
      { atUs: 2_000, instance: 0, requests: [3] },
      { atUs: 10_300, instance: 0, requests: [4] },
    ]);
    expect(answers.map((a) => [a.id, a.error])).toEqual([[1, undefined], [2, undefined], [3, undefined], [4, undefined]]);
  });
});

describe("priority levels (Triton's PriorityQueue)", () => {
  it("fills batches from the highest priority level first, first come first served within a level; priority 0 is default_priority_level", async () => {
    const { clock, batches, send, finish } = model({ batch: { maxBatchSize: 4 }, levels: [{}, {}], defaultLevel: 2 });
    send(1, { rows: 4 }); // a full batch: runs at once
    send(2, { rows: 2 }); // priority 0: level 2
    send(3, { priority: 1 });
    send(4, { rows: 2, priority: 2 });
    send(5, { rows: 2, priority: 1 });
    await clock.advanceTo(10);
    await finish();
    await clock.advanceTo(20);
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 10, instance: 0, requests: [3, 5] }, // 1 + 2: request 2 would pass max_batch_size 4
      { atUs: 20, instance: 0, requests: [2, 4] },
    ]);
  });

  it("refuses a priority the model does not have", async () => {
    const { clock, answers, send } = model({ levels: [{}, {}] });
    send(1, { priority: 3 });
    await clock.advanceTo(0);
    expect(answers).toEqual([{ id: 1, atUs: 0, error: "INVALID_ARG priority 3 is out of range: the model has 2 priority level(s)" }]);
  });
});

describe("queue policy (Triton's PolicyQueue)", () => {
  it("REJECT: fails a request still queued at default_timeout_microseconds with 'Request timeout expired', and never executes it", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { maxBatchSize: 1 }, levels: [{ defaultTimeoutUs: 50_000 }] });
    send(1); // executing: a timeout applies only while queued
    await clock.advanceTo(1_000);
    send(2);
    await clock.advanceTo(50_999);
    expect(answers).toEqual([]);
    await clock.advanceTo(51_000);
    expect(answers).toEqual([{ id: 2, atUs: 51_000, error: "UNAVAILABLE Request timeout expired" }]);
    await clock.advanceTo(60_000);
    await finish();
    expect(batches).toEqual([{ atUs: 0, instance: 0, requests: [1] }]);
    expect(answers.at(-1)).toEqual({ id: 1, atUs: 60_000 });
  });

  it.each([
    { name: "a shorter request timeout applies where allow_timeout_override is set", allow: true, timeoutUs: 5_000, expiresAt: 5_000 },
    { name: "a longer one does not lengthen the default", allow: true, timeoutUs: 80_000, expiresAt: 50_000 },
    { name: "without allow_timeout_override the request's timeout is ignored", allow: false, timeoutUs: 5_000, expiresAt: 50_000 },
  ])("timeout parameter: $name", async ({ allow, timeoutUs, expiresAt }) => {
    const { clock, answers, send } = model({ batch: { maxBatchSize: 1 }, levels: [{ defaultTimeoutUs: 50_000, allowTimeoutOverride: allow }] });
    send(1);
    send(2, { timeoutUs });
    await clock.advanceTo(expiresAt - 1);
    expect(answers).toEqual([]);
    await clock.advanceTo(expiresAt);
    expect(answers).toEqual([{ id: 2, atUs: expiresAt, error: "UNAVAILABLE Request timeout expired" }]);
  });

  it("DELAY: a request past its timeout is not failed; it waits behind the requests that have not timed out, then executes", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { maxBatchSize: 1 }, levels: [{ timeoutAction: "DELAY", defaultTimeoutUs: 20_000 }] });
    send(1);
    send(2);
    await clock.advanceTo(30_000);
    send(3);
    await clock.advanceTo(40_000);
    await finish();
    await clock.advanceTo(50_000);
    await finish();
    await clock.advanceTo(60_000);
    await finish();
    expect(batches).toEqual([
      { atUs: 0, instance: 0, requests: [1] },
      { atUs: 40_000, instance: 0, requests: [3] }, // 3 is within its timeout; 2 timed out at 20 000
      { atUs: 50_000, instance: 0, requests: [2] },
    ]);
    expect(answers).toEqual([{ id: 1, atUs: 40_000 }, { id: 3, atUs: 50_000 }, { id: 2, atUs: 60_000 }]);
  });

  it("max_queue_size: refuses a request while its level holds that many queued ('Exceeds maximum queue size'); an executing one does not count", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { maxBatchSize: 1 }, levels: [{ maxQueueSize: 2 }] });
    send(1); // executing
    send(2);
    send(3);
    send(4);
    await clock.advanceTo(10);
    expect(answers).toEqual([{ id: 4, atUs: 0, error: "UNAVAILABLE Exceeds maximum queue size" }]);
    await finish(); // 2 leaves the queue for the instance: room for one more
    send(5);
    send(6);
    await clock.advanceTo(20);
    expect(answers.slice(1)).toEqual([{ id: 1, atUs: 10 }, { id: 6, atUs: 10, error: "UNAVAILABLE Exceeds maximum queue size" }]);
    for (const atUs of [30, 40, 50]) {
      await clock.advanceTo(atUs);
      await finish();
    }
    expect(batches.map((b) => b.requests)).toEqual([[1], [2], [3], [5]]);
  });

  it("drops a queued request whose client cancelled it, without executing it", async () => {
    const { clock, batches, answers, send, finish } = model({ batch: { maxBatchSize: 1 } });
    const controller = new AbortController();
    send(1);
    send(2, { signal: controller.signal });
    send(3);
    await clock.advanceTo(5);
    controller.abort();
    await clock.advanceTo(10);
    await finish();
    await clock.advanceTo(20);
    await finish();
    expect(batches.map((b) => b.requests)).toEqual([[1], [3]]);
    expect(answers).toEqual([{ id: 2, atUs: 5, error: "CANCELLED request was cancelled by the client" }, { id: 1, atUs: 10 }, { id: 3, atUs: 20 }]);
  });
});

describe("instances and preserve_ordering", () => {
  it("hands requests to every idle instance at once; with one instance the next waits for it", async () => {
    const two = model({ batch: { maxBatchSize: 1 }, instances: 2 });
    two.send(1);
    two.send(2);
    const one = model({ batch: { maxBatchSize: 1 } });
    one.send(1);
    one.send(2);
    await one.clock.advanceTo(100);
    await one.finish();
    await two.clock.advanceTo(0);
    expect(two.batches).toEqual([{ atUs: 0, instance: 0, requests: [1] }, { atUs: 0, instance: 1, requests: [2] }]);
    expect(one.batches).toEqual([{ atUs: 0, instance: 0, requests: [1] }, { atUs: 100, instance: 0, requests: [2] }]);
  });

  it.each([
    { preserveOrdering: true, order: [1, 2], second: 20 },
    { preserveOrdering: false, order: [2, 1], second: 10 },
  ])("preserve_ordering $preserveOrdering: a batch that finishes first answers at $second µs", async ({ preserveOrdering, order, second }) => {
    const { clock, answers, send, finish } = model({ batch: { maxBatchSize: 1 }, instances: 2, preserveOrdering });
    send(1);
    send(2);
    await clock.advanceTo(10);
    await finish(1); // the later batch finishes first
    await clock.advanceTo(20);
    await finish(0);
    expect(answers.map((a) => a.id)).toEqual(order);
    expect(answers.find((a) => a.id === 2)!.atUs).toBe(second);
  });
});
