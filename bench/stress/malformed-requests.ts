import { gzipSync } from "node:zlib";
import fc from "fast-check";
import type { RestRequest } from "./stress-clients";

/**
 * Generators of malformed requests (fast-check arbitraries), built from the shape of a valid request with every
 * part swapped, at random, for something a client can get wrong: wrong types, absurd or negative dimensions,
 * integers past 2^53 or 2^64 written as raw JSON literals, unknown datatypes, broken binary framing, bodies that
 * are not JSON at all or not gzip, hostile model names, and undecodable protobuf. Sampled with a seed, so a
 * campaign replays exactly.
 */

/** The models the malformed-request server serves; requests name them (and others) at random. */
export const MALFORMED_MODELS = ["simple", "identity_bytes", "identity_int64", "identity_fp16"] as const;

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 12 }), fc.constant([]), fc.constant({}),
  fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 2, Number.MAX_VALUE, "\u0000int", "1e999", "-0", "NaN"),
  fc.array(fc.integer({ min: -3, max: 20 }), { maxLength: 4 }),
);

const datatype = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("INT32", "FP32", "BYTES", "BOOL", "UINT64", "INT64", "FP16", "BF16", "INT8", "UINT8", "FP64") },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("int32", "TYPE_INT32", "STRING", "")) },
  { weight: 1, arbitrary: junk },
);

const dimension = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(1, 16, 2, 8) },
  { weight: 2, arbitrary: fc.integer({ min: -3, max: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1.5, -1) },
  { weight: 1, arbitrary: junk },
);

const shape = fc.oneof({ weight: 5, arbitrary: fc.array(dimension, { maxLength: 5 }) }, { weight: 1, arbitrary: junk });

const nested = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, fc.integer(), fc.double(), fc.string({ maxLength: 6 }), fc.boolean(), fc.array(tie("value"), { maxLength: 4 })),
})).value;

const tensorData = fc.oneof(
  fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 14, maxLength: 18 }),
  fc.array(fc.integer(), { maxLength: 40 }),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 20 }),
  fc.array(fc.double(), { maxLength: 20 }),
  nested,
  junk,
);

const parameterKey = fc.oneof(
  fc.constantFrom("binary_data_size", "binary_data", "binary_data_output", "classification", "priority", "timeout", "sequence_id", "sequence_start", "sequence_end", "\u0000int"),
  fc.string({ maxLength: 10 }),
);
const parameters = fc.oneof({ weight: 3, arbitrary: fc.dictionary(parameterKey, fc.oneof(fc.integer({ min: -2, max: 4096 }), junk), { maxKeys: 3 }) }, { weight: 1, arbitrary: junk });

const tensorName = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("INPUT0", "INPUT1") }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }, { weight: 1, arbitrary: junk });

const input = fc.record(
  { name: tensorName, datatype, shape, data: tensorData, parameters },
  { requiredKeys: [] },
);

const output = fc.record({ name: fc.oneof(fc.constantFrom("OUTPUT0", "OUTPUT1"), fc.string({ maxLength: 8 }), junk), parameters }, { requiredKeys: [] });

/** A JSON infer body: a valid one's structure with any part replaced by something wrong. */
const inferBody = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 8 }), junk),
    inputs: fc.oneof({ weight: 5, arbitrary: fc.array(input, { maxLength: 3 }) }, { weight: 1, arbitrary: junk }),
    outputs: fc.oneof(fc.array(output, { maxLength: 3 }), junk),
    parameters,
  },
  { requiredKeys: [] },
);

const modelName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...MALFORMED_MODELS) },
  { weight: 1, arbitrary: fc.constantFrom("nope", "..", "%2e%2e", "%00", "simple%2F..%2F..", "a".repeat(300), "simple%20", "SIMPLE") },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(encodeURIComponent) },
);
const version = fc.oneof(fc.constant(""), fc.constantFrom("/versions/1", "/versions/0", "/versions/-1", "/versions/x", "/versions/99999999999999999999", "/versions/"));

/** Raw literals JSON.stringify can never produce: integers past 2^53 and 2^64, exponents, hex, non-finite names. */
const rawLiteral = fc.constantFrom("18446744073709551616", "9007199254740993", "99999999999999999999", "1e999", "-1e999", "0x10", "NaN", "Infinity", "-0", "1.0e400", "00012", "-9223372036854775809");

function restInfer(path: string, body: Buffer | string, headers: Record<string, string> = {}): RestRequest {
  return { method: "POST", path, body, headers: { "content-type": "application/json", ...headers } };
}

const inferPath = fc.tuple(modelName, version).map(([model, v]) => `/v2/models/${model}${v}/infer`);

/** Every kind of malformed REST request, weighted towards infer bodies (the largest attack surface). */
const malformedRestRequest: fc.Arbitrary<RestRequest> = fc.oneof(
  // Structurally wrong JSON bodies.
  { weight: 6, arbitrary: fc.tuple(inferPath, inferBody).map(([path, body]) => restInfer(path, JSON.stringify(body))) },
  // Literals past what a double holds exactly, in the places where integers matter.
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom(...MALFORMED_MODELS), datatype, rawLiteral, fc.constantFrom("shape", "data", "binary_data_size", "priority")).map(([model, type, literal, where]) => {
      const shapeText = where === "shape" ? `[1,${literal}]` : "[1,16]";
      const dataText = where === "data" ? `[${literal}${",1".repeat(15)}]` : `[${"1,".repeat(15)}1]`;
      const params = where === "binary_data_size" ? `,"parameters":{"binary_data_size":${literal}}` : "";
      const top = where === "priority" ? `,"parameters":{"priority":${literal}}` : "";
      return restInfer(`/v2/models/${model}/infer`, `{"inputs":[{"name":"INPUT0","datatype":${JSON.stringify(type)},"shape":${shapeText},"data":${dataText}${params}}]${top}}`);
    }),
  },
  // Binary tensor extension with a header length and tail that may not agree.
  {
    weight: 3,
    arbitrary: fc.tuple(inferPath, inferBody, fc.uint8Array({ maxLength: 256 }), fc.oneof(fc.constant("exact"), fc.integer({ min: -5, max: 5000 }).map(String), fc.constantFrom("abc", "-1", "99999999999999999999", "1e3", " 12", ""))).map(([path, body, tail, length]) => {
      const header = Buffer.from(JSON.stringify(body));
      return restInfer(path, Buffer.concat([header, tail]), {
        "content-type": "application/octet-stream",
        "inference-header-content-length": length === "exact" ? String(header.byteLength) : length,
      });
    }),
  },
  // Bodies that are not JSON, not gzip, or inflate to something else.
  {
    weight: 2,
    arbitrary: fc.tuple(inferPath, fc.uint8Array({ maxLength: 1024 }), fc.constantFrom(undefined, "gzip", "deflate", "br", "identity", "gzip, gzip", "x-unknown"), fc.boolean()).map(([path, bytes, encoding, realGzip]) => {
      const body = encoding === "gzip" && realGzip ? gzipSync(Buffer.from(bytes)) : Buffer.from(bytes);
      return restInfer(path, body, encoding === undefined ? {} : { "content-encoding": encoding });
    }),
  },
  // Other routes, wrong verbs, hostile names.
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS") as fc.Arbitrary<RestRequest["method"]>, modelName, version, fc.constantFrom("", "/ready", "/config", "/stats", "/infer", "/metadata", "/../../v2", "/trace/setting"), fc.oneof(fc.constant(""), fc.json())).map(([method, model, v, tail, body]) => ({
      method, path: `/v2/models/${model}${v}${tail}`, headers: { "content-type": "application/json" }, body: method === "GET" ? undefined : body,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom("/v2/repository/index", "/v2/repository/models/nope/load", "/v2/repository/models/simple/unload", "/v2/systemsharedmemory/status", "/v2/logging", "/v2/trace/setting", "/v2//models", "/v2/models/%ff/infer"), fc.oneof(fc.json(), fc.string({ maxLength: 40 }))).map(([path, body]) => restInfer(path, body)),
  },
);

const int64Text = fc.oneof(fc.integer({ min: -3, max: 40 }).map(String), fc.constantFrom("9223372036854775807", "-9223372036854775808", "2147483648", "9007199254740993", "4294967296"));

const grpcParameter = fc.oneof(
  fc.record({ int64_param: int64Text }),
  fc.record({ string_param: fc.string({ maxLength: 8 }) }),
  fc.record({ bool_param: fc.boolean() }),
  fc.record({ double_param: fc.double() }),
  fc.record({ uint64_param: fc.constantFrom("0", "18446744073709551615", "1") }),
);
const grpcParameters = fc.dictionary(parameterKey, grpcParameter, { maxKeys: 3 });

const grpcContents = fc.record({
  int_contents: fc.array(fc.integer(), { maxLength: 20 }),
  int64_contents: fc.array(int64Text, { maxLength: 20 }),
  uint_contents: fc.array(fc.nat(), { maxLength: 20 }),
  uint64_contents: fc.array(fc.constantFrom("0", "1", "18446744073709551615"), { maxLength: 20 }),
  fp32_contents: fc.array(fc.float(), { maxLength: 20 }),
  fp64_contents: fc.array(fc.double(), { maxLength: 20 }),
  bool_contents: fc.array(fc.boolean(), { maxLength: 20 }),
  bytes_contents: fc.array(fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)), { maxLength: 20 }),
}, { requiredKeys: [] });

const grpcInput = fc.record({
  name: fc.oneof(fc.constantFrom("INPUT0", "INPUT1"), fc.string({ maxLength: 8 })),
  datatype: fc.oneof(fc.constantFrom("INT32", "FP32", "BYTES", "BOOL", "UINT64", "INT64", "FP16", "BF16"), fc.string({ maxLength: 6 })),
  shape: fc.array(int64Text, { maxLength: 5 }),
  parameters: grpcParameters,
  contents: grpcContents,
}, { requiredKeys: ["name", "datatype", "shape"] });

/** A ModelInferRequest that fits the proto but not the model, or asks for something absurd. */
const malformedGrpcMessage: fc.Arbitrary<Record<string, unknown>> = fc.record({
  model_name: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...MALFORMED_MODELS) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }),
  model_version: fc.constantFrom("", "1", "0", "x", "-1", "99999999999999999999"),
  id: fc.string({ maxLength: 8 }),
  parameters: grpcParameters,
  inputs: fc.array(grpcInput, { maxLength: 3 }),
  outputs: fc.array(fc.record({ name: fc.oneof(fc.constantFrom("OUTPUT0", "OUTPUT1"), fc.string({ maxLength: 6 })), parameters: grpcParameters }), { maxLength: 3 }),
  raw_input_contents: fc.array(fc.uint8Array({ maxLength: 96 }).map((b) => Buffer.from(b)), { maxLength: 3 }),
}, { requiredKeys: ["model_name"] });

/** Bytes to send as a ModelInferRequest: a valid message cut, corrupted or extended, or noise. */
function malformedGrpcBytes(validMessage: Buffer): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
    fc.nat({ max: Math.max(0, validMessage.byteLength - 1) }).map((end) => validMessage.subarray(0, end)),
    fc.tuple(fc.nat({ max: validMessage.byteLength - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, value]) => {
      const copy = Buffer.from(validMessage);
      copy[at] = value;
      return copy;
    }),
    fc.tuple(fc.nat({ max: validMessage.byteLength }), fc.uint8Array({ minLength: 1, maxLength: 32 })).map(([at, extra]) =>
      Buffer.concat([validMessage.subarray(0, at), Buffer.from(extra), validMessage.subarray(at)])),
  );
}

/** A malformed case for either protocol, in the order the campaign sends them. */
export type MalformedCase =
  | { readonly protocol: "rest"; readonly request: RestRequest }
  | { readonly protocol: "grpc"; readonly message: Record<string, unknown> }
  | { readonly protocol: "grpc"; readonly bytes: Buffer };

/**
 * `count` cases, half REST and half gRPC (a quarter of those undecodable bytes), interleaved; the same seed gives
 * the same cases.
 */
export function sampleMalformedCases(count: number, seed: number, validGrpcMessage: Buffer): MalformedCase[] {
  const restCount = Math.ceil(count / 2);
  const grpcCount = count - restCount;
  const bytesCount = Math.floor(grpcCount / 4);
  const rest = fc.sample(malformedRestRequest, { seed, numRuns: restCount }).map((request): MalformedCase => ({ protocol: "rest", request }));
  const messages = fc.sample(malformedGrpcMessage, { seed: seed + 1, numRuns: grpcCount - bytesCount }).map((message): MalformedCase => ({ protocol: "grpc", message }));
  const bytes = fc.sample(malformedGrpcBytes(validGrpcMessage), { seed: seed + 2, numRuns: bytesCount }).map((b): MalformedCase => ({ protocol: "grpc", bytes: b }));
  const grpc = [...messages, ...bytes];
  const cases: MalformedCase[] = [];
  for (let i = 0; i < Math.max(rest.length, grpc.length); i++) {
    if (i < rest.length) cases.push(rest[i]!);
    if (i < grpc.length) cases.push(grpc[i]!);
  }
  return cases;
}

/** A short, printable description of a case for the report. */
export function describeCase(entry: MalformedCase): string {
  if (entry.protocol === "rest") {
    const sent = entry.request.body;
    const body = typeof sent === "string" || Buffer.isBuffer(sent) ? Buffer.from(sent).toString("utf8").replace(/[^\x20-\x7e]/g, "?") : "";
    return `REST ${entry.request.method} ${entry.request.path} ${JSON.stringify(entry.request.headers ?? {})} ${body}`.slice(0, 400);
  }
  if ("bytes" in entry) return `gRPC ModelInfer raw bytes (${entry.bytes.byteLength}): ${entry.bytes.subarray(0, 64).toString("hex")}`;
  return `gRPC ModelInfer ${JSON.stringify(entry.message, (_key, value: unknown) => (value instanceof Uint8Array ? `<${value.byteLength} bytes>` : value))}`.slice(0, 400);
}
