import { copyInSlices } from "../../core/index";
import type { ModelInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";
import type { EncodedModelInferResponse } from "./infer-response-encoder";

/**
 * A response message already serialized and framed for the wire (the 5-byte gRPC prefix, then the message), which
 * the call's patched `serializeMessage` (grpc-call-internals.ts) writes as it is.
 */
export class FramedMessage {
  constructor(readonly frame: Buffer) {}
}

/** Field 6 (`raw_output_contents`), wire type 2 (length-delimited). */
export const RAW_OUTPUT_CONTENTS_KEY = (6 << 3) | 2;
/** ModelStreamInferResponse's field 2 (`infer_response`), wire type 2. */
export const INFER_RESPONSE_KEY = (2 << 3) | 2;
const PREFIX_BYTES = 5;

function varintBytes(value: number): number {
  let bytes = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes++;
  return bytes;
}

/** A length-delimited field's key and length, as protobuf writes them before the field's bytes. */
export function fieldHeader(key: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(1 + varintBytes(length));
  header[0] = key;
  writeVarint(header, length, 1);
  return header;
}

function writeVarint(target: Buffer, value: number, offset: number): number {
  let at = offset;
  let rest = value;
  while (rest >= 0x80) {
    target[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  target[at++] = rest;
  return at;
}

/**
 * A `ModelInferResponse` serialized and framed with one copy of its output bytes, in slices with turns of the event
 * loop between them; `streamed`: as the `infer_response` of a ModelStreamInferResponse (with no `error_message`).
 * Left to grpc-js, protobufjs writes the whole message into a buffer of its own and grpc-js then copies it into the
 * framed one: two synchronous copies of every output (for a 64 MiB output, 100-160 ms of main-thread time each on a
 * busy 2-core machine, and 128 MiB held at once besides the output). Here `serialize` (ModelInfer's protobufjs
 * serializer) writes only the small fields, and `raw_output_contents` (field 6, the last) follows them, byte for
 * byte as protobufjs would write it.
 */
export async function frameInferResponse(
  message: EncodedModelInferResponse, serialize: (message: ModelInferResponse) => Buffer, streamed = false,
): Promise<FramedMessage> {
  const head = serialize({ ...message, raw_output_contents: [] });
  let length = head.byteLength;
  for (const raw of message.raw_output_contents) length += 1 + varintBytes(raw.byteLength) + raw.byteLength;
  const frameLength = streamed ? 1 + varintBytes(length) + length : length;
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + frameLength);
  frame[0] = 0; // not compressed
  frame.writeUInt32BE(frameLength, 1);
  let offset = PREFIX_BYTES;
  if (streamed) {
    frame[offset++] = INFER_RESPONSE_KEY;
    offset = writeVarint(frame, length, offset);
  }
  head.copy(frame, offset);
  offset += head.byteLength;
  for (const raw of message.raw_output_contents) {
    frame[offset++] = RAW_OUTPUT_CONTENTS_KEY;
    offset = writeVarint(frame, raw.byteLength, offset);
    await copyInSlices(frame, raw, offset);
    offset += raw.byteLength;
  }
  return new FramedMessage(frame);
}
