import { describe, expect, it } from "vitest";
import { RingBuffer } from "../../../../server/core/scheduling/ring-buffer";

describe("RingBuffer", () => {
  it("is FIFO across growth and wrap-around", () => {
    const ring = new RingBuffer<number>(2);
    const out: number[] = [];
    for (let i = 0; i < 10; i++) {
      ring.push(i);
      if (i % 3 === 2) out.push(ring.shift()!);
    }
    while (ring.length > 0) out.push(ring.shift()!);
    expect(out).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ring.shift()).toBeUndefined();
  });

  it("retains in order and reads by index", () => {
    const ring = new RingBuffer<number>(4);
    for (const n of [1, 2, 3, 4, 5, 6]) ring.push(n);
    ring.shift();
    ring.retain((n) => n % 2 === 0);
    expect([0, 1, 2].map((i) => ring.at(i))).toEqual([2, 4, 6]);
    expect(ring.at(3)).toBeUndefined();
  });
});
