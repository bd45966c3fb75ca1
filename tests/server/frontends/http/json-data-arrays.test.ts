import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DataType, InferenceError } from "../../../../server/core/index";
import { parseExactJson } from "../../../../server/frontends/http/exact-json";
import { decodeInferRequest } from "../../../../server/frontends/http/infer-request-codec";
import { encodeJsonData } from "../../../../server/frontends/http/json-tensor-data";
import { splitHeader } from "../../../../server/frontends/http/json-data-arrays";

const context = {
  modelName: "m", modelVersion: undefined, modelInputs: () => {
    throw new Error("not a raw request");
  },
};

type Outcome = { bytes: number[] } | { error: string };

/** What the body's input decodes to through the request decoder (which reads data arrays from the bytes). */
function decoded(text: string): Outcome {
  try {
    return { bytes: [...decodeInferRequest(Buffer.from(text), undefined, context).request.inputs[0]!.data] };
  } catch (error) {
    if (error instanceof InferenceError) return { error: error.message };
    throw error;
  }
}

/** What it decodes to through JSON.parse of the whole text (exact-json.ts) and encodeJsonData, as before. */
function throughJsonParse(text: string): Outcome {
  let header: { inputs: { datatype: DataType; shape: number[]; data: unknown }[] };
  try {
    header = parseExactJson(text) as typeof header;
  } catch (error) {
    return { error: `failed to parse the request JSON buffer: ${(error as Error).message}` };
  }
  const input = header.inputs[0]!;
  try {
    return { bytes: [...encodeJsonData(input.datatype, input.data, input.shape.reduce((a, b) => a * b, 1), "x")] };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const body = (datatype: string, count: number, data: string): string =>
  `{"id":"r","inputs":[{"name":"x","datatype":"${datatype}","shape":[${count}],"data":${data}}],"outputs":[{"name":"y"}]}`;

const DATATYPES: DataType[] = ["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64", "FP32", "FP64", "BOOL", "BYTES", "FP16"];

/** Number tokens as clients write them: ints, floats, exponents, -0, long integers, NaN and infinities by name. */
const numberToken = fc.oneof(
  fc.integer({ min: -300, max: 300 }).map(String),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).map(String),
  fc.double().map((value) => (Number.isNaN(value) ? "NaN" : value === Infinity ? "Infinity" : value === -Infinity ? "-Infinity" : Object.is(value, -0) ? "-0" : String(value))),
  fc.float().map((value) => (Number.isFinite(value) ? String(value) : "Inf")),
  fc.tuple(fc.constantFrom("", "-"), fc.stringMatching(/^(0|[1-9]\d{0,20})$/), fc.stringMatching(/^(\.\d{1,20})?$/), fc.stringMatching(/^([eE][+-]?\d{1,3})?$/))
    .map((parts) => parts.join("")),
  fc.constantFrom("-0", "-0.0", "0e5", "-0E-3", "NaN", "-NaN", "Inf", "-Inf", "Infinity", "1E400", "-1e-400", "9007199254740993", "123456789012345678"),
);

/** String tokens: plain ASCII, escapes, other scripts, control characters JSON.parse refuses. */
const stringToken = fc.oneof(
  fc.string({ unit: fc.constantFrom(..." azAZ09~!#$%&'()*+,-./:;<=>?@[]^_`{|}") }).map((text) => `"${text}"`),
  fc.string().map((text) => JSON.stringify(text)),
  fc.string({ unit: "grapheme" }).map((text) => JSON.stringify(text)),
  fc.constantFrom(`""`, `"\\u0041\\n"`, `"\\""`, `"a\\\\"`, `"tab\there"`, `"\u00e9"`, `"\u{1F600}"`),
);

/** Tokens JSON.parse refuses, or reads as something else than a number. */
const oddToken = fc.constantFrom(`"a`, `"a\\u00"`, "01", "1.", ".5", "+1", "NaNa", "-", "1e", "Infinit", "true", "null", `"1"`, "{}", "0x10", "00000000000000001", "1 2");

const space = fc.constantFrom("", "", " ", "\n", "\t ", "\r\n");

/** The tokens as a flat array or split into rows of a nested one. */
function arrayText(tokens: string[], rows: number, gap: string): string {
  if (rows <= 1 || tokens.length % rows !== 0) return `[${gap}${tokens.join(`,${gap}`)}${gap}]`;
  const width = tokens.length / rows;
  const inner = Array.from({ length: rows }, (_, row) => `[${tokens.slice(row * width, (row + 1) * width).join(",")}]`);
  return `[${gap}${inner.join(`${gap},`)}]`;
}

describe("JSON data arrays read from the body's bytes", () => {
  it("gives the bytes and the errors JSON.parse and encodeJsonData give, for random numbers of every datatype", () => {
    fc.assert(fc.property(
      fc.constantFrom(...DATATYPES), fc.array(numberToken, { maxLength: 24 }), fc.integer({ min: 1, max: 4 }), space, fc.integer({ min: -1, max: 1 }),
      (datatype, tokens, rows, gap, countSkew) => {
        const text = body(datatype, Math.max(0, tokens.length + countSkew), arrayText(tokens, rows, gap));
        expect(decoded(text)).toEqual(throughJsonParse(text));
      },
    ), { numRuns: 3000 });
  });

  it("gives the BYTES JSON.parse and encodeJsonData give, and their errors, for random strings (and strings among numbers)", () => {
    fc.assert(fc.property(
      fc.constantFrom<DataType>("BYTES", "BYTES", "INT32", "BOOL"), fc.array(stringToken, { maxLength: 16 }), fc.array(numberToken, { maxLength: 2 }),
      fc.integer({ min: 1, max: 4 }), space, fc.integer({ min: -1, max: 1 }),
      (datatype, strings, numbers, rows, gap, countSkew) => {
        const tokens = [...strings, ...numbers];
        const text = body(datatype, Math.max(0, tokens.length + countSkew), arrayText(tokens, rows, gap));
        expect(decoded(text)).toEqual(throughJsonParse(text));
      },
    ), { numRuns: 2000 });
  });

  it("leaves malformed arrays to JSON.parse, with its message", () => {
    fc.assert(fc.property(
      fc.constantFrom(...DATATYPES), fc.array(numberToken, { maxLength: 6 }), oddToken, fc.nat(6),
      (datatype, tokens, odd, at) => {
        tokens.splice(Math.min(at, tokens.length), 0, odd);
        const text = body(datatype, tokens.length, arrayText(tokens, 1, ""));
        expect(decoded(text)).toEqual(throughJsonParse(text));
      },
    ), { numRuns: 1000 });
  });

  it("reads 64-bit integers exactly, -0 as -0, and NaN and infinities by name", () => {
    const int64 = decodeInferRequest(Buffer.from(body("INT64", 3, "[-9223372036854775808, 9223372036854775807, -0]")), undefined, context);
    expect([...new BigInt64Array(int64.request.inputs[0]!.data.slice().buffer)]).toEqual([-(2n ** 63n), 2n ** 63n - 1n, 0n]);
    const fp64 = decodeInferRequest(Buffer.from(body("FP64", 6, "[[-0, NaN], [-Infinity, Inf], [1e999, 0.1]]")), undefined, context);
    expect([...new Float64Array(fp64.request.inputs[0]!.data.slice().buffer)]).toEqual([-0, Number.NaN, -Infinity, Infinity, Infinity, 0.1]);
  });

  it("cuts only the inputs' data arrays of numbers or plain strings out of the header's text", () => {
    const text = `{"parameters":{"data":[1,2]},"inputs":[{"name":"a","data":[1, [2]]},{"name":"b","data":["s\\n"]},{"name":"c","data": [3,4] },{"name":"d","data":[1,"s"]},{"name":"e","data":[["x y"], ["z"]]}],`
      + `"outputs":[{"name":"data","data":[5]}]}`;
    const split = splitHeader(Buffer.from(text), text.length);
    expect(split.text).toBe(`{"parameters":{"data":[1,2]},"inputs":[{"name":"a","data":0},{"name":"b","data":["s\\n"]},{"name":"c","data": 0 },{"name":"d","data":[1,"s"]},{"name":"e","data":0}],`
      + `"outputs":[{"name":"data","data":[5]}]}`);
    expect([...split.arrays].map(([index, array]) => [index, array.elements])).toEqual([[0, 2], [2, 2], [4, 2]]);
  });

  it("parses headers with escaped or repeated keys as a whole, as JSON.parse reads them", () => {
    for (const text of [
      `{"inputs":[{"name":"x","datatype":"INT32","shape":[1],"d\\u0061ta":[1]}]}`,
      `{"inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[1],"data":[2]}]}`,
      `{"inputs":[],"inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[3]}]}`,
    ]) {
      expect(splitHeader(Buffer.from(text), text.length).arrays.size).toBe(0);
      expect(decoded(text)).toEqual(throughJsonParse(text));
    }
  });
});
