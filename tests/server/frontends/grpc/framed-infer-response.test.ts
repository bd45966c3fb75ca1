import { describe, expect, it } from "vitest";
import { frameInferResponse } from "../../../../server/frontends/grpc/framed-infer-response";
import type { ModelInferResponse } from "../../../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";
import type { EncodedModelInferResponse } from "../../../../server/frontends/grpc/infer-response-encoder";
import { loadGrpcServiceDefinitions } from "../../../../server/frontends/grpc/grpc-service-definitions";

const { inference } = loadGrpcServiceDefinitions();
const serialize = inference["ModelInfer"]!.responseSerialize as (message: ModelInferResponse) => Buffer;
const stream = inference["ModelStreamInfer"]!;

/** What grpc-js writes for a message: its serializeMessage's prefix, then protobufjs's bytes. */
function grpcJsFrame(message: ModelInferResponse): Buffer {
  const body = serialize(message);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.byteLength, 1);
  return Buffer.concat([prefix, body]);
}

function bytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff);
}

describe("frameInferResponse", () => {
  const responses: [string, EncodedModelInferResponse][] = [
    ["no outputs", { model_name: "m", model_version: "1", id: "", outputs: [], raw_output_contents: [] }],
    ["outputs of every varint length, one empty (in shared memory)", {
      model_name: "model", model_version: "3", id: "request-7",
      parameters: { sequence_id: { int64_param: "42" } },
      outputs: [
        { name: "A", datatype: "UINT8", shape: [100] },
        { name: "B", datatype: "UINT8", shape: [0], parameters: { shared_memory_region: { string_param: "r" }, shared_memory_byte_size: { int64_param: "16" } } },
        { name: "C", datatype: "INT32", shape: [4, 1000] },
        { name: "D", datatype: "UINT8", shape: [2 ** 21 + 3] },
      ],
      raw_output_contents: [bytes(100, 1), new Uint8Array(0), bytes(16_000, 2), bytes(2 ** 21 + 3, 3)],
    }],
    ["an output over the copy slice (4 MiB)", {
      model_name: "big", model_version: "1", id: "", outputs: [{ name: "OUT", datatype: "UINT8", shape: [9 * 2 ** 20 + 1] }],
      raw_output_contents: [bytes(9 * 2 ** 20 + 1, 4)],
    }],
  ];

  it.each(responses)("writes what grpc-js and protobufjs would: %s", async (_name, message) => {
    const { frame } = await frameInferResponse(message, serialize);
    expect(frame.equals(grpcJsFrame(message))).toBe(true);
  });

  it.each(responses)("writes a ModelStreamInferResponse that decodes as protobufjs's: %s", async (_name, message) => {
    const { frame } = await frameInferResponse(message, serialize, true);
    expect(frame.readUInt32BE(1)).toBe(frame.byteLength - 5);
    const expected = stream.responseSerialize({ error_message: "", infer_response: message });
    // Decoded and written again by protobufjs: the same bytes (the frame leaves the empty error_message out).
    expect(stream.responseSerialize(stream.responseDeserialize(frame.subarray(5))).equals(expected)).toBe(true);
  });

  it("lets other work run while a large output is copied", async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const [, message] = responses[2]!;
    await frameInferResponse(message, serialize);
    clearInterval(ticking);
    // One setImmediate turn between each 4 MiB slice lets the timer phase run.
    expect(turns).toBeGreaterThan(0);
  });
});
