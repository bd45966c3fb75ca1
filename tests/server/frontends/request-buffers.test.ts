import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { releaseMemoryNow } from "../../../server/frontends/release-memory";
import { RequestBufferPool, requestBuffers } from "../../../server/frontends/request-buffers";

const KIB = 1024;

describe("RequestBufferPool", () => {
  it("hands a body's memory to the next body of its size class once it is given back", () => {
    const pool = new RequestBufferPool();
    const first = pool.take(600 * KIB + 123);
    expect(first.byteLength).toBe(600 * KIB + 123);
    pool.give(first);
    expect(pool.freeBytes).toBe(640 * KIB);
    const second = pool.take(600 * KIB + 200);
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteLength).toBe(600 * KIB + 200);
    expect(pool.freeBytes).toBe(0);
  });

  it("takes each buffer back once, and none it did not hand out", () => {
    const pool = new RequestBufferPool();
    const body = pool.take(100 * KIB);
    expect(pool.give(body)).toBe(true);
    expect(pool.give(body)).toBe(false);
    expect(pool.freeBytes).toBe(128 * KIB);
    expect(pool.give(Buffer.allocUnsafeSlow(128 * KIB))).toBe(false);
    expect(pool.give(undefined)).toBe(false);
    expect(pool.freeBytes).toBe(128 * KIB);
    const a = pool.take(100 * KIB);
    const b = pool.take(100 * KIB);
    expect(a.buffer).not.toBe(b.buffer);
  });

  it("leaves small and large bodies to the garbage collector", () => {
    const pool = new RequestBufferPool();
    for (const bytes of [1 * KIB, 63 * KIB, 4 * KIB * KIB + 1]) {
      const body = pool.take(bytes);
      expect(body.byteLength).toBe(bytes);
      pool.give(body);
    }
    expect(pool.freeBytes).toBe(0);
  });

  it("keeps at most maxFreeBytes between requests", () => {
    const pool = new RequestBufferPool(1024 * KIB);
    const bodies = Array.from({ length: 5 }, () => pool.take(256 * KIB));
    for (const body of bodies) pool.give(body);
    expect(pool.freeBytes).toBe(1024 * KIB);
  });

  it("lends memory another thread reads and writes in place, where a posted body is shared, not copied or moved", async () => {
    const pool = new RequestBufferPool();
    const body = pool.take(100 * KIB);
    body.fill(7);
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<Uint8Array>((resolve) => port2.once("message", resolve));
    port1.postMessage(body);
    const there = await received;
    port1.close();
    expect(there[0]).toBe(7);
    there[1] = 9;
    expect(body[1]).toBe(9);
    expect(body.byteLength).toBe(100 * KIB);
    // What comes back from another thread is the same memory, but not the buffer this pool lent.
    expect(pool.give(there)).toBe(false);
    expect(pool.give(body)).toBe(true);
  });
});

describe("releaseMemoryNow", () => {
  it("gives pooled memory back to the pool, as it cannot be moved away, and frees a large buffer of a request's own at once", () => {
    const body = requestBuffers.take(100 * KIB);
    const before = requestBuffers.freeBytes;
    releaseMemoryNow(body.buffer);
    expect(requestBuffers.freeBytes).toBe(before + 128 * KIB);
    expect(requestBuffers.give(body)).toBe(false);
    const own = new ArrayBuffer(2 * KIB * KIB);
    releaseMemoryNow(own);
    expect(own.byteLength).toBe(0);
    // The next body of that size takes the memory given back.
    expect(requestBuffers.take(100 * KIB).buffer).toBe(body.buffer);
  });
});
