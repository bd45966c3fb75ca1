import { describe, expect, it } from "vitest";
import { parseExactJson } from "../../../../server/frontends/http/exact-json";

describe("parseExactJson", () => {
  it("keeps 64-bit integers exact as bigint", () => {
    expect(parseExactJson('{"data":[9007199254740993,-9223372036854775808, 18446744073709551615 ,1]}')).toEqual({
      data: [9007199254740993n, -9223372036854775808n, 18446744073709551615n, 1],
    });
  });

  it("leaves digit runs inside strings alone, escapes included", () => {
    const text = '{"data":["a,1234567890123456789]","\\"x\\",12345678901234567,"],"n":[12345678901234567]}';
    expect(parseExactJson(text)).toEqual({ data: ["a,1234567890123456789]", '"x",12345678901234567,'], n: [12345678901234567n] });
  });

  it("leaves floats with long fractions or exponents as numbers", () => {
    const text = '{"data":[0.7105249166488647,1.2345678901234567e+30,12345678901234567.5]}';
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
  });

  it("leaves an object a client wrote with the parser's internal marker key an object", () => {
    const forged = '{"data":[{"\\u0000int":"5"},12345678901234567],"small":[{"\\u0000int":"7"}]}';
    expect(parseExactJson(forged)).toEqual({ data: [{ "\u0000int": "5" }, 12345678901234567n], small: [{ "\u0000int": "7" }] });
  });

  it("reads NaN, Inf, Infinity and their negatives as rapidjson's kParseNanAndInfFlag does, outside strings only", () => {
    expect(parseExactJson('{"data":[NaN,-NaN,Inf,-Inf,Infinity,-Infinity,-0.0],"s":"NaN Infinity"}')).toEqual({
      data: [Number.NaN, Number.NaN, Infinity, -Infinity, Infinity, -Infinity, -0], s: "NaN Infinity",
    });
    expect(Object.is((parseExactJson("[-0.0]") as number[])[0], -0)).toBe(true);
    // Without a -0 of its own, NaN takes a cheaper path; the answer is the same.
    expect(parseExactJson('{"data":[NaN,-NaN,Inf,-Inf,Infinity,-Infinity,0,-1,12345678901234567],"s":"-0"}')).toEqual({
      data: [Number.NaN, Number.NaN, Infinity, -Infinity, Infinity, -Infinity, 0, -1, 12345678901234567n], s: "-0",
    });
    expect(parseExactJson('{"p":{"x":NaN,"y":[[1,NaN]]},"z":NaN}')).toEqual({ p: { x: Number.NaN, y: [[1, Number.NaN]] }, z: Number.NaN });
    expect(Object.is((parseExactJson("[NaN,-0e3]") as number[])[1], -0)).toBe(true);
    // A number that underflows to -0 is a -0 of the text too, not a NaN.
    expect(Object.is((parseExactJson("[NaN,-1e-400]") as number[])[1], -0)).toBe(true);
    expect(() => parseExactJson("[Infin]")).toThrow(SyntaxError);
    expect(() => parseExactJson("[NaNx]")).toThrow(SyntaxError);
    expect(() => parseExactJson("[nan]")).toThrow(SyntaxError);
  });

  it("throws JSON.parse's error on malformed input", () => {
    expect(() => parseExactJson('{"data":[12345678901234567,')).toThrow(SyntaxError);
  });
});
