import { Readable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { elementCount, type InferResponse } from "../../core/index";
import { NOTHING_PLACED, type PlacedOutput } from "../shared-memory/tensor-shared-memory";
import type { OutputEncoding } from "./infer-request-codec";
import { JSON_SLICE_ELEMENTS, jsonDataText } from "./json-tensor-data";

/** Bytes handed to the socket at a time: each write that completes is progress the write timeout sees. */
const STREAM_CHUNK_BYTES = 1 << 20;
/** Text buffered before it is handed on, and what the stream holds ahead of a client that reads slowly. */
const TEXT_CHUNK_CHARS = 64 * 1024;

/** A response body: the whole of it when small, otherwise a stream produced as the client reads it. */
export type ResponseBody =
  | { readonly kind: "buffer"; readonly bytes: Buffer }
  | { readonly kind: "stream"; readonly stream: Readable; readonly byteLength: number | undefined };

export interface EncodedInferResponse {
  readonly body: ResponseBody;
  /** Set when binary outputs follow the JSON header. */
  readonly headerLength: number | undefined;
}

/**
 * Triton's field order (id, model_name, model_version, outputs), each output's data as JSON text (`jsonData`, one
 * entry per output, undefined for binary ones) or as binary_data_size; an output written to shared memory names its
 * region and size instead.
 */
function* responseJson(response: InferResponse, jsonData: readonly (Iterable<string> | undefined)[], placed: ReadonlyMap<string, PlacedOutput>): Generator<string> {
  const id = response.id ? `"id":${JSON.stringify(response.id)},` : "";
  yield `{${id}"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)},"outputs":[`;
  for (const [index, output] of response.outputs.entries()) {
    const head = `${index === 0 ? "" : ","}{"name":${JSON.stringify(output.name)},"datatype":"${output.datatype}","shape":${JSON.stringify(output.shape)}`;
    const data = jsonData[index];
    const shared = placed.get(output.name);
    if (shared !== undefined) {
      yield `${head},"parameters":{"shared_memory_region":${JSON.stringify(shared.region)},"shared_memory_byte_size":${shared.byteSize}}}`;
    } else if (data === undefined) {
      yield `${head},"parameters":{"binary_data_size":${output.data.byteLength}}}`;
    } else {
      yield `${head},"data":`;
      yield* data;
      yield "}";
    }
  }
  yield "]}";
}

/**
 * The JSON text as buffers, returning to the event loop after each one: formatting millions of elements takes
 * seconds of CPU, which must not keep health checks and other requests waiting.
 */
async function* pacedText(pieces: Iterable<string>): AsyncGenerator<Buffer> {
  let pending = "";
  for (const piece of pieces) {
    pending += piece;
    if (pending.length >= TEXT_CHUNK_CHARS) {
      yield Buffer.from(pending);
      pending = "";
      await nextTurn();
    }
  }
  if (pending !== "") yield Buffer.from(pending);
}

function* inChunks(parts: readonly Uint8Array[]): Generator<Uint8Array> {
  for (const part of parts) {
    for (let start = 0; start < part.byteLength; start += STREAM_CHUNK_BYTES) yield part.subarray(start, start + STREAM_CHUNK_BYTES);
  }
}

/**
 * Writes a KServe v2 infer response, each output as JSON `data` or appended as binary with `binary_data_size`.
 * Small responses come back whole. A large JSON-only response is a stream whose text is formatted as the client
 * reads it (memory stays at the output tensors, whatever the client does); a large one with binary outputs
 * first formats its JSON header, yielding between slices, then streams the tensors without copying them. Outputs
 * in `placed` were written to shared memory: their data is not sent.
 */
export async function encodeInferResponse(
  response: InferResponse, encoding: OutputEncoding, placed: ReadonlyMap<string, PlacedOutput> = NOTHING_PLACED,
): Promise<EncodedInferResponse> {
  const binaryParts: Uint8Array[] = [];
  // Prepared up front, so an output JSON cannot carry (FP16) is refused before any byte is sent.
  const jsonData: (Iterable<string> | undefined)[] = [];
  let jsonElements = 0;
  for (const output of response.outputs) {
    if (placed.has(output.name)) {
      jsonData.push(undefined);
    } else if (encoding.allBinary || encoding.binaryOutputs.has(output.name)) {
      binaryParts.push(output.data);
      jsonData.push(undefined);
    } else {
      const count = elementCount(output.shape);
      jsonData.push(jsonDataText(output.datatype, output.data, count, output.name));
      jsonElements += count;
    }
  }
  const largeJson = jsonElements > JSON_SLICE_ELEMENTS;
  if (largeJson && binaryParts.length === 0) {
    const stream = Readable.from(pacedText(responseJson(response, jsonData, placed)), { objectMode: false, highWaterMark: TEXT_CHUNK_CHARS });
    return { body: { kind: "stream", stream, byteLength: undefined }, headerLength: undefined };
  }
  let header: Buffer;
  if (largeJson) {
    const chunks: Buffer[] = [];
    for await (const chunk of pacedText(responseJson(response, jsonData, placed))) chunks.push(chunk);
    header = Buffer.concat(chunks);
  } else {
    header = Buffer.from([...responseJson(response, jsonData, placed)].join(""));
  }
  if (binaryParts.length === 0) return { body: { kind: "buffer", bytes: header }, headerLength: undefined };
  const binaryBytes = binaryParts.reduce((sum, part) => sum + part.byteLength, 0);
  if (header.byteLength + binaryBytes <= STREAM_CHUNK_BYTES) {
    return { body: { kind: "buffer", bytes: Buffer.concat([header, ...binaryParts]) }, headerLength: header.byteLength };
  }
  const stream = Readable.from(inChunks([header, ...binaryParts]), { objectMode: false });
  return { body: { kind: "stream", stream, byteLength: header.byteLength + binaryBytes }, headerLength: header.byteLength };
}
