import { describe, expect, it } from "vitest";
import { SpareBuffers } from "../../../server/backends/spare-buffers";

describe("SpareBuffers", () => {
  it("gathers the next batch at the start of the smallest spare that holds it", () => {
    const spares = new SpareBuffers();
    const big = new ArrayBuffer(1000);
    const small = new ArrayBuffer(300);
    spares.give([big, small]);
    const batch = spares.take(200);
    expect(batch.buffer).toBe(small);
    expect([batch.byteOffset, batch.byteLength]).toEqual([0, 200]);
    expect(spares.take(500).buffer).toBe(big);
    expect(spares.take(100).buffer.byteLength).toBe(100);
  });

  it("keeps the largest maxSpares buffers of at most maxBytes each", () => {
    const spares = new SpareBuffers(2, 1000);
    const kept = [new ArrayBuffer(800), new ArrayBuffer(900)];
    spares.give([new ArrayBuffer(100), ...kept, new ArrayBuffer(2000), new ArrayBuffer(0)]);
    expect(spares.take(850).buffer).toBe(kept[1]);
    expect(spares.take(700).buffer).toBe(kept[0]);
    expect(spares.take(50).buffer.byteLength).toBe(50);
  });
});
