import { describe, expect, it } from "vitest";
import { copyBytes } from "../../common/copy-bytes";

describe("copyBytes", () => {
  const source = Uint8Array.from({ length: 100 }, (_, i) => i + 1);
  for (const [name, make] of [
    ["plain memory", (n: number) => new ArrayBuffer(n)],
    ["shared memory", (n: number) => new SharedArrayBuffer(n)],
  ] as const) {
    it(`copies a view into a view at an offset, both in ${name}, and nothing beside them`, () => {
      const from = new Uint8Array(make(120), 7, 100);
      from.set(source);
      const into = new Uint8Array(make(200), 3, 150);
      copyBytes(into, from.subarray(10, 60), 40);
      expect([...into.subarray(40, 90)]).toEqual([...source.subarray(10, 60)]);
      expect(into[39]).toBe(0);
      expect(into[90]).toBe(0);
      expect(new Uint8Array(into.buffer)[2]).toBe(0);
    });
  }

  it("copies from plain into shared memory and back, and refuses a source that does not fit", () => {
    const shared = new Uint8Array(new SharedArrayBuffer(64));
    copyBytes(shared, source.subarray(0, 64), 0);
    const back = new Uint8Array(64);
    copyBytes(back, shared, 0);
    expect([...back]).toEqual([...source.subarray(0, 64)]);
    expect(() => copyBytes(shared, source.subarray(0, 10), 60)).toThrow(RangeError);
    copyBytes(shared, new Uint8Array(0), 64);
  });
});
