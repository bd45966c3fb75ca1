import { describe, expect, it } from "vitest";
import type { DataType } from "../../../protocol/datatypes";
import { joinBytesStrings } from "../../../protocol/tensor-bytes";
import { formatG, tensorTraceData } from "../../../server/tracing/tensor-trace-data";

const tensor = (datatype: DataType, shape: number[], data: ArrayBufferView) => ({
  name: "T", datatype, shape, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
});

const dataOf = (of: ReturnType<typeof tensor>) => tensorTraceData(of, Number.POSITIVE_INFINITY);

// Each case is what server src/tracer.cc (TraceTensorActivity) streams for the datatype.
describe("tensorTraceData, as Triton's TraceTensorActivity writes the values", () => {
  it("writes integers in decimal, 64-bit ones exactly", () => {
    expect(dataOf(tensor("INT32", [1, 4], new Int32Array([0, -1, 2147483647, -2147483648])))).toBe("0,-1,2147483647,-2147483648");
    expect(dataOf(tensor("UINT16", [2], new Uint16Array([0, 65535])))).toBe("0,65535");
    expect(dataOf(tensor("INT64", [2], new BigInt64Array([-(2n ** 63n), 2n ** 53n + 1n])))).toBe("-9223372036854775808,9007199254740993");
    expect(dataOf(tensor("UINT64", [1], new BigUint64Array([2n ** 64n - 1n])))).toBe("18446744073709551615");
  });

  it("writes BOOL as 0 and 1 (no std::boolalpha), UINT8 and INT8 as one character each (C++ streams char as text)", () => {
    expect(dataOf(tensor("BOOL", [3], new Uint8Array([0, 1, 7])))).toBe("0,1,1");
    expect(dataOf(tensor("UINT8", [2], new Uint8Array([72, 105])))).toBe("H,i");
    expect(dataOf(tensor("INT8", [2], new Int8Array([65, -1])))).toBe("A,\u00ff");
  });

  it("leaves FP16 and BF16 empty, as Triton does", () => {
    expect(dataOf(tensor("FP16", [2], new Uint16Array([0x3c00, 0x4000])))).toBe("");
    expect(dataOf(tensor("BF16", [1], new Uint16Array([0x3f80])))).toBe("");
  });

  it("writes FP32 and FP64 as std::ostream's default (%g, 6 significant digits)", () => {
    expect(dataOf(tensor("FP32", [6], new Float32Array([0.1, 1.5, -2, 1234567, 1e-7, 100000])))).toBe("0.1,1.5,-2,1.23457e+06,1e-07,100000");
    expect(dataOf(tensor("FP64", [3], new Float64Array([1 / 3, 1e21, Number.POSITIVE_INFINITY])))).toBe("0.333333,1e+21,inf");
  });

  it("follows printf's %g where it differs from JavaScript's formatting", () => {
    // Exact ties round to even (glibc), where toPrecision rounds up.
    expect([formatG(1234565, false), formatG(1234575, false), formatG(123456.5, false)]).toEqual(["1.23456e+06", "1.23458e+06", "123456"]);
    expect([formatG(999999.5, false), formatG(0.0001, false), formatG(0.00001, false)]).toEqual(["1e+06", "0.0001", "1e-05"]);
    // The sign is the sign bit's: x86's default NaN carries it.
    expect(dataOf(tensor("FP32", [3], new Uint32Array([0xffc00000, 0x7fc00000, 0x80000000])))).toBe("-nan,nan,-0");
  });

  it("writes each BYTES element in double quotes; a malformed element ends the data, as in Triton", () => {
    expect(dataOf(tensor("BYTES", [1, 3], joinBytesStrings(["abc", "", "dé"])))).toBe('"abc","","dé"');
    const truncated = joinBytesStrings(["ok", "lost"]).subarray(0, 10);
    expect(dataOf(tensor("BYTES", [2], truncated))).toBe('"ok"');
  });

  it("stops rendering once the text would pass its bound", () => {
    const values = tensor("INT32", [4], new Int32Array([10, 20, 30, 40]));
    expect(tensorTraceData(values, 11)).toBe("10,20,30,40");
    expect(tensorTraceData(values, 10)).toBeUndefined();
    const texts = tensor("BYTES", [2], joinBytesStrings(["abc", "de"]));
    expect(tensorTraceData(texts, 10)).toBe('"abc","de"');
    expect(tensorTraceData(texts, 9)).toBeUndefined();
  });
});
