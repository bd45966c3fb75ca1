import { afterEach, describe, expect, it, vi } from "vitest";
import { IDLE_COLLECTION_MIN_BYTES, IdleCollection } from "../../../server/memory/idle-collection";

const outcome = { modelName: "m", modelVersion: "1", failureReason: undefined, requestNs: 1, queueNs: 0 };

describe("IdleCollection", () => {
  afterEach(() => void vi.useRealTimers());

  it("collects once when traffic stops after a burst, and only while buffers worth collecting exist", () => {
    vi.useFakeTimers();
    let collections = 0;
    let arrayBufferBytes = IDLE_COLLECTION_MIN_BYTES;
    const idle = new IdleCollection(1000, () => void collections++, () => arrayBufferBytes);
    vi.advanceTimersByTime(3000);
    expect(collections).toBe(0); // no traffic yet
    for (let second = 0; second < 3; second++) {
      idle.observer.requestCompleted(outcome);
      vi.advanceTimersByTime(1000);
    }
    expect(collections).toBe(0); // still busy
    vi.advanceTimersByTime(1000);
    expect(collections).toBe(1); // a quiet interval after traffic
    vi.advanceTimersByTime(5000);
    expect(collections).toBe(1); // once per burst
    idle.observer.requestCompleted(outcome);
    arrayBufferBytes = IDLE_COLLECTION_MIN_BYTES - 1;
    vi.advanceTimersByTime(3000);
    expect(collections).toBe(1); // too little to bother
    idle.close();
  });
});
