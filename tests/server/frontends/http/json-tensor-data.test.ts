import { describe, expect, it } from "vitest";
import type { DataType } from "../../../../server/core/index";
import { encodeJsonData, jsonDataText } from "../../../../server/frontends/http/json-tensor-data";

/** {@link jsonDataText}'s pieces joined into the one array literal they make. */
function decodeJsonData(datatype: DataType, data: Uint8Array, elementCount: number, tensorName: string): string {
  return [...jsonDataText(datatype, data, elementCount, tensorName)].join("");
}

const fp64 = (values: number[]): Uint8Array => new Uint8Array(new Float64Array(values).buffer);
const fp32 = (values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);

describe("decodeJsonData: floats as Triton's rapidjson Writer (kWriteNanAndInfFlag) prints them", () => {
  it("keeps the sign of zero and gives integral values a .0", () => {
    expect(decodeJsonData("FP64", fp64([-0, 0, 1, -7, 2 ** 53, 123456789012345680000]), 6, "y"))
      .toBe("[-0.0,0.0,1.0,-7.0,9007199254740992.0,123456789012345680000.0]");
  });

  it("switches to exponents where rapidjson does (1e21 and above, below 1e-6), without a '+'", () => {
    expect(decodeJsonData("FP64", fp64([1e21, 1.5e300, 0.000001, 1e-7, -2.5e-10, 0.5]), 6, "y"))
      .toBe("[1e21,1.5e300,0.000001,1e-7,-2.5e-10,0.5]");
  });

  it("prints FP32 values as the doubles they are, and NaN and infinities by name", () => {
    expect(decodeJsonData("FP32", fp32([0.1, -0, Number.NaN, Infinity, -Infinity]), 5, "y"))
      .toBe("[0.10000000149011612,-0.0,NaN,Infinity,-Infinity]");
  });
});

describe("encodeJsonData: Triton's JSON nesting limit (HTTP_MAX_JSON_NESTING_DEPTH, src/common.h)", () => {
  const nested = (depth: number, value: unknown): unknown => (depth === 0 ? value : [nested(depth - 1, value)]);

  // As ReadDataFromJsonHelper and JsonBytesArrayByteSize: `data` is depth 0, a value at depth 100 is refused.
  it.each(["INT64", "BYTES"] as const)("takes %s data whose element is 99 arrays deep and refuses one 100 deep", (datatype) => {
    const element = datatype === "BYTES" ? "hello" : 123;
    expect(encodeJsonData(datatype, nested(99, element), 1, "INPUT0").byteLength).toBeGreaterThan(0);
    expect(() => encodeJsonData(datatype, nested(100, element), 1, "INPUT0")).toThrow(/^JSON nesting depth exceeds maximum allowed limit \(100\)$/);
  });
});

describe("encodeJsonData: an element of the wrong JSON type, in Triton's words", () => {
  // qa/L0_http/generate_endpoint_test.py (test_invalid_input_types) and src/http_server.cc's JsonBytesArrayByteSize.
  it("refuses a BYTES element that is no string and a BOOL element that is no boolean", () => {
    expect(() => encodeJsonData("BYTES", ["a", 123], 2, "PROMPT")).toThrow(/^Unable to parse JSON bytes array: attempt to access JSON non-string as string$/);
    expect(() => encodeJsonData("BOOL", ["false"], 1, "STREAM")).toThrow(/^attempt to access JSON non-boolean as boolean$/);
  });
});
