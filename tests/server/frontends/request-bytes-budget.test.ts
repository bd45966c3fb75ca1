import { describe, expect, it } from "vitest";
import { RequestBudgetExceeded, RequestBytesBudget, RequestLargerThanBudget } from "../../../server/frontends/request-bytes-budget";

describe("RequestBytesBudget", () => {
  it("refuses a lease more than is left as retry-later, and more than the whole budget as too large", () => {
    const budget = new RequestBytesBudget(1000);
    const first = budget.lease();
    first.holdAtLeast(600);
    const second = budget.lease();
    expect(() => second.holdAtLeast(500)).toThrow(RequestBudgetExceeded);
    expect(() => second.holdAtLeast(1001)).toThrow(RequestLargerThanBudget);
    expect(() => second.refuseIfNeverFits(1001)).toThrow(/request of at least 1001 bytes exceeds the server's in-flight budget of 1000 bytes/);
    expect(() => second.refuseIfNeverFits(1000)).not.toThrow();
    expect(budget.inFlightBytes).toBe(600);
    first.release();
    first.release();
    expect(budget.inFlightBytes).toBe(0);
  });
});
