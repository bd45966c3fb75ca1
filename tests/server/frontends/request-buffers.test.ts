import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { RequestBufferPool } from "../../../server/frontends/request-buffers";

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

  it("lends fresh memory in place of a kept buffer that was freed meanwhile", () => {
    const pool = new RequestBufferPool();
    const body = pool.take(100 * KIB);
    expect(pool.give(body)).toBe(true);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(null, [body.buffer as ArrayBuffer]);
    port2.close();
    const next = pool.take(100 * KIB);
    expect(next.byteLength).toBe(100 * KIB);
    expect(next.buffer.byteLength).toBe(128 * KIB);
  });

  it("does not take back a buffer that moved to another thread", () => {
    const pool = new RequestBufferPool();
    const body = pool.take(100 * KIB);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(body, [body.buffer as ArrayBuffer]);
    port1.close();
    port2.close();
    pool.give(body);
    expect(pool.freeBytes).toBe(0);
  });
});
