import { StreamDecoder } from "@grpc/grpc-js/build/src/stream-decoder";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GrpcMessageAssembler } from "../../../../server/frontends/grpc/grpc-message-assembler";
import { RequestBudgetExceeded, RequestBytesBudget, RequestLargerThanBudget } from "../../../../server/frontends/request-bytes-budget";

/** A gRPC message as sent: flag, 4-byte big-endian length, body. */
function framed(body: Buffer, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(compressed ? 1 : 0, 0);
  prefix.writeUInt32BE(body.byteLength, 1);
  return Buffer.concat([prefix, body]);
}

/** `stream` cut at `cuts` (sorted offsets), each chunk in a buffer of its own as nghttp2 hands them over. */
function chunksOf(stream: Buffer, cuts: readonly number[]): Buffer[] {
  const bounds = [0, ...cuts, stream.byteLength];
  return bounds.slice(1).map((end, i) => Buffer.from(stream.subarray(bounds[i]!, end)));
}

describe("GrpcMessageAssembler", () => {
  it("hands over the same framed messages as grpc-js's StreamDecoder, however the stream is cut", () => {
    const body = fc.uint8Array({ maxLength: 40_000 }).map((bytes) => Buffer.from(bytes));
    fc.assert(fc.property(
      fc.array(fc.tuple(body, fc.boolean()), { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }),
      (messages, rawCuts) => {
        const stream = Buffer.concat(messages.map(([bytes, compressed]) => framed(bytes, compressed)));
        const cuts = [...new Set(rawCuts.map((cut) => cut % (stream.byteLength + 1)))].sort((a, b) => a - b);
        const assembler = new GrpcMessageAssembler(-1);
        const decoder = new StreamDecoder(-1);
        const assembled: Buffer[] = [];
        const decoded: Buffer[] = [];
        for (const chunk of chunksOf(stream, cuts)) {
          assembled.push(...assembler.write(chunk));
          decoded.push(...decoder.write(chunk));
        }
        expect(assembled).toEqual(decoded);
        expect(assembled).toHaveLength(messages.length);
      },
    ), { numRuns: 300 });
  });

  it("keeps no chunk: a message's bytes stay as they were when its chunks are overwritten later", () => {
    const message = framed(Buffer.alloc(70_000, 7));
    const assembler = new GrpcMessageAssembler(-1);
    const chunks = chunksOf(message, [3, 16_384, 32_768]);
    const out = chunks.flatMap((chunk) => assembler.write(chunk));
    for (const chunk of chunks) chunk.fill(0);
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(message)).toBe(true);
  });

  it("refuses a message over the limit from its length prefix, with grpc-js's message", () => {
    const prefix = framed(Buffer.alloc(0)).subarray(0, 5);
    prefix.writeUInt32BE(1025, 1);
    expect(() => new GrpcMessageAssembler(1024).write(prefix)).toThrow("Received message larger than max (1025 vs 1024)");
    expect(() => new StreamDecoder(1024).write(prefix)).toThrow("Received message larger than max (1025 vs 1024)");
    expect(new GrpcMessageAssembler(1025).write(Buffer.concat([prefix, Buffer.alloc(1025)]))).toHaveLength(1);
  });

  it("holds a message's bytes against the budget as they arrive, not its announced length, until it is whole", () => {
    const budget = new RequestBytesBudget(100_000);
    const assembler = new GrpcMessageAssembler(-1, budget);
    const [head, middle, tail] = chunksOf(framed(Buffer.alloc(90_000)), [10, 50_000]);
    assembler.write(head!);
    expect(budget.inFlightBytes).toBe(10);
    assembler.write(middle!);
    expect(budget.inFlightBytes).toBe(50_000);
    expect(assembler.write(tail!)).toHaveLength(1);
    expect(budget.inFlightBytes).toBe(0);
  });

  it("refuses the chunk that the budget cannot hold, then takes nothing more; a stream closed part-way lets go", () => {
    const budget = new RequestBytesBudget(100_000);
    const other = budget.lease();
    other.holdAtLeast(60_000);
    const assembler = new GrpcMessageAssembler(-1, budget);
    const [head, tail] = chunksOf(framed(Buffer.alloc(50_000)), [30_000]);
    assembler.write(head!);
    expect(() => assembler.write(tail!)).toThrow(RequestBudgetExceeded);
    expect(budget.inFlightBytes).toBe(60_000);
    expect(assembler.write(framed(Buffer.alloc(1)))).toEqual([]);
    other.release();
    const abandoned = new GrpcMessageAssembler(-1, budget);
    abandoned.write(head!);
    abandoned.letGo();
    expect(budget.inFlightBytes).toBe(0);
  });

  it("refuses a message larger than the whole budget from its length prefix", () => {
    const budget = new RequestBytesBudget(1000);
    expect(() => new GrpcMessageAssembler(-1, budget).write(framed(Buffer.alloc(1000)).subarray(0, 5))).toThrow(RequestLargerThanBudget);
    expect(budget.inFlightBytes).toBe(0);
  });
});
