import { describe, expect, it } from "vitest";
import { parseJsonWithBigInts } from "../../client/parse-json-with-bigints";

describe("parseJsonWithBigInts", () => {
  it("returns integers beyond 2^53 as exact bigints and leaves the rest as numbers", () => {
    const parsed = parseJsonWithBigInts('{"data":[9007199254740993,-9223372036854775808,5,1.5e300,1234567890123456]}') as { data: unknown[] };
    expect(parsed.data).toEqual([9007199254740993n, -9223372036854775808n, 5, 1.5e300, 1234567890123456]);
  });

  it("never touches digits inside strings", () => {
    const text = '{"s":"a,12345678901234567890]","t":"\\"99999999999999999999\\"","n":18446744073709551615}';
    expect(parseJsonWithBigInts(text)).toEqual({ s: "a,12345678901234567890]", t: '"99999999999999999999"', n: 18446744073709551615n });
  });

  it("reads the NaN, Infinity and -Infinity Triton writes for FP values, outside strings only", () => {
    expect(parseJsonWithBigInts('{"data":[NaN,Infinity,-Infinity,-0.0,1.0],"s":"NaN"}')).toEqual({ data: [Number.NaN, Infinity, -Infinity, -0, 1], s: "NaN" });
  });

  it("rejects text that is not JSON", () => {
    expect(() => parseJsonWithBigInts("{12345678901234567890}")).toThrow(SyntaxError);
  });
});
