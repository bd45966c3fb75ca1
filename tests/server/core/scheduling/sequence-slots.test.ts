import { describe, expect, it } from "vitest";
import { SequenceSlots } from "../../../../server/core/scheduling/sequence-slots";

/** Slots of `instances` x `perInstance`, Triton's L0_sequence_batcher idle time of 5 s; the clock is passed per call. */
const slots = (instances: number, perInstance: number): SequenceSlots<string> => new SequenceSlots<string>(instances, perInstance, 5_000_000);
const where = (admission: ReturnType<SequenceSlots<string>["admit"]>): string =>
  admission.kind === "slot" ? `instance ${admission.slot.instance} slot ${admission.slot.index}` : admission.kind;

describe("SequenceSlots: Triton's slot assignment, backlog and reaper", () => {
  it("gives starting sequences the lowest free slot index first, across instances", () => {
    const s = slots(2, 2);
    expect(["a", "b", "c", "d"].map((id) => where(s.admit(id, true, false, `${id}0`, 0)))).toEqual([
      "instance 0 slot 0", "instance 1 slot 0", "instance 0 slot 1", "instance 1 slot 1",
    ]);
  });

  it("keeps a sequence's requests in its slot, in order", () => {
    const s = slots(1, 2);
    s.admit("a", true, false, "a0", 0);
    s.admit("b", true, false, "b0", 0);
    s.admit("a", false, false, "a1", 1);
    expect(s.slots[0]!.map((slot) => slot.queue)).toEqual([["a0", "a1"], ["b0"]]);
  });

  it("refuses a request of an unknown sequence without START", () => {
    expect(slots(1, 1).admit("x", false, false, "x1", 0).kind).toBe("not-started");
  });

  it("backlogs sequences beyond the slots; END frees the slot for the oldest backlogged sequence, with its queued requests", () => {
    const s = slots(1, 1);
    const a = s.admit("a", true, false, "a0", 0);
    expect(s.admit("b", true, false, "b0", 1).kind).toBe("backlog");
    expect(s.admit("c", true, false, "c0", 2).kind).toBe("backlog");
    expect(s.admit("b", false, false, "b1", 3).kind).toBe("backlog");
    s.admit("a", false, true, "a1", 4);
    const slot = a.kind === "slot" ? a.slot : undefined;
    expect(s.settle(slot!)).toBeUndefined(); // a1 (END) still queued: the slot stays a's
    slot!.queue.splice(0);
    expect(s.settle(slot!)?.queue).toEqual(["b0", "b1"]);
    expect(slot!.sequence).toBe("b");
    expect(s.backlogLength).toBe(1);
    expect(where(s.admit("b", false, false, "b2", 5))).toBe("instance 0 slot 0");
    expect(s.admit("a", false, false, "a2", 6).kind).toBe("not-started");
  });

  it("keeps an executing slot (oldest: in flight) until its request finished", () => {
    const s = slots(1, 1);
    const a = s.admit("a", true, true, "a0", 0);
    const slot = a.kind === "slot" ? a.slot : undefined;
    slot!.queue.splice(0);
    slot!.inFlight = true;
    s.admit("b", true, false, "b0", 0);
    expect(s.settle(slot!)).toBeUndefined();
    slot!.inFlight = false;
    expect(s.settle(slot!)?.sequence).toBe("b");
  });

  it("a backlogged sequence that already ended takes the slot and frees it again after its requests", () => {
    const s = slots(1, 1);
    const a = s.admit("a", true, true, "a0", 0);
    s.admit("b", true, true, "b0", 0);
    const slot = a.kind === "slot" ? a.slot : undefined;
    slot!.queue.splice(0);
    expect(s.settle(slot!)?.ending).toBe(true);
    slot!.queue.splice(0);
    expect(s.settle(slot!)).toBeUndefined();
    expect(where(s.admit("c", true, false, "c0", 0))).toBe("instance 0 slot 0");
  });

  it("ends a sequence idle for max_sequence_idle_microseconds (the reaper): its slot frees, its next request needs START", () => {
    const s = slots(1, 1);
    const a = s.admit("a", true, false, "a0", 0);
    if (a.kind === "slot") a.slot.queue.splice(0);
    expect(s.admit("b", true, false, "b0", 10).kind).toBe("backlog");
    expect(s.reap(4_999_999)).toEqual({ ended: [], nextUs: 5_000_000 });
    const { ended } = s.reap(5_000_000);
    expect(ended.map((slot) => slot.index)).toEqual([0]);
    expect(s.settle(ended[0]!)?.sequence).toBe("b");
    expect(s.admit("a", false, false, "a1", 5_000_001).kind).toBe("not-started");
    // b waited in the backlog longer than the idle time: in its slot now, it is ended at the next look (as Triton's reaper).
    expect(s.reap(5_000_010).ended.map((slot) => slot.sequence)).toEqual(["b"]);
  });

  it("expires a backlogged sequence at the earliest timeout of its requests; its later requests need START", () => {
    const s = slots(1, 1);
    s.admit("a", true, false, "a0", 0);
    s.admit("b", true, false, "b0", 100, 1000);
    s.admit("b", false, false, "b1", 200, 500); // 700 is earlier than 1100
    s.admit("c", true, false, "c0", 300); // no timeout: waits as long as it takes
    expect(s.expire(699)).toEqual({ expired: [], nextUs: 700 });
    expect(s.expire(700)).toEqual({ expired: ["b0", "b1"], nextUs: Infinity });
    expect(s.admit("b", false, false, "b2", 701).kind).toBe("not-started");
    expect(s.backlogLength).toBe(1);
  });

  it("cancelling a queued request ends its sequence and takes its other queued requests with it", () => {
    const s = slots(1, 1);
    const a = s.admit("a", true, false, "a0", 0);
    s.admit("a", false, false, "a1", 1);
    s.admit("b", true, false, "b0", 2);
    s.admit("b", false, false, "b1", 3);
    s.admit("c", true, false, "c0", 4);
    expect(s.cancel("b1")).toEqual(["b0", "b1"]);
    expect(s.admit("b", false, false, "b2", 5).kind).toBe("not-started");
    expect(s.cancel("a1")).toEqual(["a0", "a1"]);
    expect(s.cancel("a1")).toEqual([]);
    const slot = a.kind === "slot" ? a.slot : undefined;
    expect(s.settle(slot!)?.sequence).toBe("c");
  });
});
