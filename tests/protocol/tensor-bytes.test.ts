import { describe, expect, it } from "vitest";
import { checkBytesElements } from "../../server/core/request/tensor";
import { bytesElementStrings, joinBytesElements, joinBytesStrings } from "../../protocol/tensor-bytes";

const TEXTS = ["", "a", "grüße", "日本語", "🙂 emoji", "\u0000nul"];

describe("BYTES serialization without a view per element", () => {
  it("joins texts exactly as joining their UTF-8 bytes does, and reads them back", () => {
    const joined = joinBytesStrings(TEXTS);
    expect(Buffer.from(joined)).toEqual(Buffer.from(joinBytesElements(TEXTS.map((t) => new TextEncoder().encode(t)))));
    expect(joined.byteOffset).toBe(0);
    expect(joined.byteLength).toBe(joined.buffer.byteLength); // a whole buffer, so a worker can transfer it
    expect(bytesElementStrings(joined)).toEqual(TEXTS);
    expect(bytesElementStrings(joined.subarray(0, 4 + 0 + 4 + 1))).toEqual(["", "a"]);
  });
});

describe("checkBytesElements", () => {
  const payload = joinBytesStrings(["ab", "cde"]);

  it("accepts the exact count with every element within the size bound", () => {
    expect(() => checkBytesElements(payload, 2, "X", 3)).not.toThrow();
  });

  it.each([
    ["a count one short", payload, 1, 3, "input 'X' holds more than 1 BYTES elements, but its shape needs 1"],
    ["a count one long", payload, 3, 3, "input 'X' holds 2 BYTES elements, but its shape needs 3"],
    ["an element over the size bound", payload, 2, 2, "BYTES element 1 of input 'X' has 3 bytes, more than the 2 allowed (--max-bytes-element-size)"],
    ["a cut length prefix", payload.subarray(0, 8), 2, 3, "unexpected end of BYTES data for input 'X': incomplete 4-byte length prefix"],
    ["an element past the end", payload.subarray(0, 10), 2, 3, "unexpected end of BYTES data for input 'X': element of 3 bytes overruns the payload"],
  ])("refuses %s with INVALID_ARG", (_name, data, count, maxBytes, message) => {
    expect(() => checkBytesElements(data, count, "X", maxBytes)).toThrow(expect.objectContaining({ code: "INVALID_ARG", message }));
  });
});
