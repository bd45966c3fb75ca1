import { describe, expect, it } from "vitest";
import { Cancellation } from "../../../../server/core/index";

describe("Cancellation", () => {
  it("tells every listener still registered, once, and stays aborted", () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    const removed = (): void => void calls.push("removed");
    cancellation.addEventListener("abort", () => calls.push("first"));
    cancellation.addEventListener("abort", removed);
    cancellation.addEventListener("abort", () => calls.push("second"));
    cancellation.removeEventListener("abort", removed);
    expect(cancellation.aborted).toBe(false);
    cancellation.abort();
    cancellation.abort();
    expect(cancellation.aborted).toBe(true);
    expect(calls).toEqual(["first", "second"]);
  });
});
