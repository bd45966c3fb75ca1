import { describe, expect, it } from "vitest";
import { bytesToTensorData, inferDataType, tensorDataToBytes, toTensorData } from "../../client/tensor-data";

describe("toTensorData", () => {
  it("passes a typed array of the right kind through untouched", () => {
    const data = new Float32Array([1.5, 2.5]);
    expect(toTensorData("FP32", data, "x")).toBe(data);
  });

  it("converts plain arrays: booleans to 0/1, numbers and bigints to 64-bit, strings to UTF-8 elements", () => {
    expect(toTensorData("BOOL", [true, false, true], "x")).toEqual(new Uint8Array([1, 0, 1]));
    expect(toTensorData("INT64", [1, 2n, -3], "x")).toEqual(new BigInt64Array([1n, 2n, -3n]));
    expect(toTensorData("UINT64", [18446744073709551615n], "x")).toEqual(new BigUint64Array([18446744073709551615n]));
    expect(toTensorData("BYTES", ["hé", "", "x"], "x")).toEqual([new Uint8Array([104, 195, 169]), new Uint8Array([]), new Uint8Array([120])]);
    expect(toTensorData("INT8", [-1, 2], "x")).toEqual(new Int8Array([-1, 2]));
  });

  it("rejects values that do not fit the datatype, naming the tensor", () => {
    expect(() => toTensorData("INT64", [1.5], "INPUT0")).toThrow(/tensor 'INPUT0': element 0 \(1.5\) is not a INT64 value/);
    expect(() => toTensorData("FP32", ["a"], "INPUT0")).toThrow(TypeError);
    expect(() => toTensorData("FP32", new Int32Array(2), "INPUT0")).toThrow(/Int32Array cannot carry FP32 data/);
    expect(() => toTensorData("BYTES", [1], "INPUT0")).toThrow(/BYTES elements must be strings/);
  });
});

describe("inferDataType", () => {
  it("reads the datatype off typed arrays and string/boolean arrays, and refuses to guess for plain numbers", () => {
    expect(inferDataType(new Float32Array(1))).toBe("FP32");
    expect(inferDataType(new BigInt64Array(1))).toBe("INT64");
    expect(inferDataType(new Uint8Array(1))).toBe("UINT8");
    expect(inferDataType(["a"])).toBe("BYTES");
    expect(inferDataType([true])).toBe("BOOL");
    expect(inferDataType([1, 2])).toBeUndefined();
  });
});

describe("wire bytes", () => {
  it("writes little-endian bytes and length-prefixed BYTES elements", () => {
    expect([...tensorDataToBytes("INT32", new Int32Array([1, -2]))]).toEqual([1, 0, 0, 0, 254, 255, 255, 255]);
    expect([...tensorDataToBytes("BYTES", [new Uint8Array([97, 98]), new Uint8Array([])])]).toEqual([2, 0, 0, 0, 97, 98, 0, 0, 0, 0]);
  });

  it("reads back what it wrote, also from an unaligned offset (as after a JSON header)", () => {
    const values = new Float64Array([Math.PI, -1e300, 0]);
    const framed = new Uint8Array(3 + values.byteLength);
    framed.set(tensorDataToBytes("FP64", values), 3);
    expect(bytesToTensorData("FP64", framed.subarray(3), "y")).toEqual(values);
    const strings = tensorDataToBytes("BYTES", [new Uint8Array([1, 2, 3]), new Uint8Array([4])]);
    expect(bytesToTensorData("BYTES", strings, "y")).toEqual([new Uint8Array([1, 2, 3]), new Uint8Array([4])]);
  });

  it("rejects byte counts that are not whole elements and BYTES that overrun", () => {
    expect(() => bytesToTensorData("INT32", new Uint8Array(6), "y")).toThrow(/6 bytes is not a whole number of INT32 elements/);
    expect(() => bytesToTensorData("BYTES", new Uint8Array([9, 0, 0, 0, 1]), "y")).toThrow(/overruns/);
  });
});
