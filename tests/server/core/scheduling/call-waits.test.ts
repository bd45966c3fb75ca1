import { describe, expect, it } from "vitest";
import { CallWaits, type WaitTarget } from "../../../../server/core/scheduling/call-waits";

/** A model version with `instanceCount` instances, `busy` of them executing (as the pool would say). */
function target(key: string, instanceCount: number, busy: () => number): WaitTarget {
  return { key, instanceCount, busyInstances: busy };
}

const chain = (model: string): { modelName: string; modelVersion: number }[] => [{ modelName: model, modelVersion: 1 }];

describe("CallWaits: the waits between instances that model calls create", () => {
  it("a model of 2 instances calling itself from both: the second call could never run", () => {
    const waits = new CallWaits();
    const [a1, a2] = [{}, {}];
    const a = target("a@1", 2, () => 2);
    const first = waits.begin(a1, "a@1", a, chain("a"));
    // a2's execution has not called yet: it will finish, so the first call can run once it does.
    expect(waits.wouldDeadlock(first)).toBe(false);
    const second = waits.begin(a2, "a@1", a, chain("a"));
    expect(waits.wouldDeadlock(second)).toBe(true);
    // Refused, the second instance's execution ends: the first call runs on it.
    waits.end(second);
    expect(waits.wouldDeadlock(first)).toBe(false);
  });

  it("waits on another model whose instance finishes are no cycle (A's two instances both waiting on B)", () => {
    const waits = new CallWaits();
    const b = target("b@1", 1, () => 1);
    waits.begin({}, "a@1", b, chain("a"));
    expect(waits.wouldDeadlock(waits.begin({}, "a@1", b, chain("a")))).toBe(false);
  });

  it("a call waiting on an instance whose call runs elsewhere and finishes is no cycle", () => {
    const waits = new CallWaits();
    const [a1, a2, b1] = [{}, {}, {}];
    const a = target("a@1", 2, () => 2);
    const b = target("b@1", 1, () => 1);
    const aToB = chain("a");
    waits.begin(a2, "a@1", b, aToB);
    waits.started(aToB, b1); // a2's call runs on b1, which calls nothing: a2 will finish
    expect(waits.wouldDeadlock(waits.begin(a1, "a@1", a, chain("a")))).toBe(false);
  });

  it("depth 3 with fan-out 2 on 4 instances: the calls that would hold every instance are found", () => {
    const waits = new CallWaits();
    const instances = [{}, {}, {}, {}];
    const m = target("m@1", 4, () => 4);
    // Two requests each hold an instance and fan out two calls; those two calls hold the other two instances and fan out again.
    const top = [waits.begin(instances[0]!, "m@1", m, chain("m")), waits.begin(instances[1]!, "m@1", m, chain("m"))];
    const running = [chain("m"), chain("m")];
    const mid = [waits.begin(instances[2]!, "m@1", m, running[0]!), waits.begin(instances[3]!, "m@1", m, running[1]!)];
    expect(top.some((wait) => waits.wouldDeadlock(wait))).toBe(true);
    expect(mid.every((wait) => waits.wouldDeadlock(wait))).toBe(true);
  });

  it("an ensemble (no instances of its own) and a model with a free instance never deadlock", () => {
    const waits = new CallWaits();
    expect(waits.wouldDeadlock(waits.begin({}, "a@1", target("ens@1", 0, () => 0), chain("a")))).toBe(false);
    expect(waits.wouldDeadlock(waits.begin({}, "a@1", target("a@1", 2, () => 1), chain("a")))).toBe(false);
  });
});
