import { deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CorruptCompressedData, inflateChecked } from "../../../server/frontends/inflate-checked";
import { RequestBytesBudget, RequestLargerThanBudget } from "../../../server/frontends/request-bytes-budget";

describe("inflateChecked", () => {
  it("inflates gzip and deflate, telling `check` the bytes produced so far as they grow", async () => {
    const original = Buffer.alloc(200_000, 3);
    for (const [encoding, compressed] of [["gzip", gzipSync(original)], ["deflate", deflateSync(original)]] as const) {
      const seen: number[] = [];
      const joins: number[] = [];
      expect((await inflateChecked(compressed, encoding, (produced, joined) => {
        seen.push(produced);
        if (joined > 0) joins.push(joined);
      })).equals(original)).toBe(true);
      // The join of the chunks is announced once, with the whole output, before it is made.
      expect(joins).toEqual([original.byteLength]);
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.at(-1)).toBe(original.byteLength);
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    }
  });

  it("stops at the chunk `check` refuses, rejecting with its error, and never produces the rest", async () => {
    const budget = new RequestBytesBudget(1 << 20);
    const lease = budget.lease();
    let last = 0;
    const inflating = inflateChecked(deflateSync(Buffer.alloc(64 << 20)), "deflate", (produced) => {
      last = produced;
      lease.holdAtLeast(produced);
    });
    await expect(inflating).rejects.toBeInstanceOf(RequestLargerThanBudget);
    // Refused at the first 1 MiB chunk past the budget: of 64 MiB, no more than 2 MiB was produced.
    expect(last).toBeLessThanOrEqual(2 << 20);
    expect(budget.inFlightBytes).toBeLessThanOrEqual(1 << 20);
    lease.release();
    expect(budget.inFlightBytes).toBe(0);
  });

  it("rejects a stream that is not gzip with CorruptCompressedData", async () => {
    await expect(inflateChecked(Buffer.from("not gzip at all"), "gzip", () => undefined)).rejects.toBeInstanceOf(CorruptCompressedData);
  });
});
