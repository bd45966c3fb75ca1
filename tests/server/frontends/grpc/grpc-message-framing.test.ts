import { describe, expect, it } from "vitest";
import { GrpcMessageFraming } from "../../../../server/frontends/grpc/grpc-message-framing";

/** A gRPC message as sent: flag, 4-byte big-endian length, body. */
function framed(bodyBytes: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bodyBytes, 1);
  return Buffer.concat([prefix, Buffer.alloc(bodyBytes, 0xff)]);
}

describe("GrpcMessageFraming", () => {
  it("counts messages that end in a chunk, whole or split anywhere, prefix included", () => {
    const stream = Buffer.concat([framed(3), framed(0), framed(300), framed(70_000)]);
    for (const splitAt of [1, 2, 4, 5, 6, 8, 9, 13, 100, 318, 319, stream.byteLength - 1]) {
      const framing = new GrpcMessageFraming();
      const first = framing.take(stream.subarray(0, splitAt));
      expect(framing.partial).toBe(splitAt !== 8 && splitAt !== 13 && splitAt !== 318);
      expect(first + framing.take(stream.subarray(splitAt))).toBe(4);
      expect(framing.partial).toBe(false);
    }
  });

  it("is partial from the first byte of a message to its last, one byte at a time", () => {
    const framing = new GrpcMessageFraming();
    const message = framed(2 ** 16 + 1);
    const partialAfter = [...message].map((byte) => {
      framing.take(Uint8Array.of(byte));
      return framing.partial;
    });
    expect(partialAfter.slice(0, -1).every(Boolean)).toBe(true);
    expect(partialAfter.at(-1)).toBe(false);
  });
});
