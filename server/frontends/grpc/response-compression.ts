import type { ServerHttp2Stream } from "node:http2";
import { deflateSync, gzipSync } from "node:zlib";
import { lengthPrefixed, PREFIX_BYTES } from "./grpc-message-framing";

/** Triton's --grpc-infer-response-compression-level values. */
export const GRPC_COMPRESSION_LEVELS = ["none", "low", "medium", "high"] as const;
export type GrpcCompressionLevel = (typeof GRPC_COMPRESSION_LEVELS)[number];

type Algorithm = "gzip" | "deflate";

/** gRPC C-core's ranking, least compressing first (compression_internal.cc, CompressionAlgorithmForLevel). */
const RANKING: readonly Algorithm[] = ["gzip", "deflate"];

/**
 * The algorithm a compression level picks among those the client accepts (its `grpc-accept-encoding`), as gRPC's
 * C-core does for Triton's `ctx.set_compression_level`: low the least compressing, high the most, medium the middle
 * one; undefined for `none` or when the client accepts neither.
 */
export function compressionAlgorithm(level: GrpcCompressionLevel, acceptEncoding: string | undefined): Algorithm | undefined {
  if (level === "none") return undefined;
  const accepted = new Set((acceptEncoding ?? "").split(",").map((name) => name.trim()));
  const supported = RANKING.filter((algorithm) => accepted.has(algorithm));
  if (supported.length === 0) return undefined;
  const index = level === "low" ? 0 : level === "medium" ? Math.floor(supported.length / 2) : supported.length - 1;
  return supported[index];
}

/**
 * Compresses the messages of one call's response with `algorithm`. grpc-js (1.14) never compresses a response,
 * so this works below it: `grpc-encoding` in the response headers, and each message it writes (one whole
 * length-prefixed message per write) re-framed with the compressed flag set.
 */
export function compressResponses(stream: ServerHttp2Stream, algorithm: Algorithm): void {
  const compress = algorithm === "gzip" ? gzipSync : deflateSync;
  const respond = stream.respond.bind(stream);
  stream.respond = (headers, options) => respond({ ...headers, "grpc-encoding": algorithm }, options);
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]): boolean => write(compressedFrame(chunk, compress), ...rest)) as typeof stream.write;
}

/** A whole uncompressed gRPC message as a compressed one; anything else as it is (its flag says uncompressed). */
function compressedFrame(chunk: unknown, compress: (data: Uint8Array) => Buffer): unknown {
  if (!Buffer.isBuffer(chunk) || chunk.byteLength < PREFIX_BYTES || chunk[0] !== 0 || chunk.readUInt32BE(1) !== chunk.byteLength - PREFIX_BYTES) return chunk;
  return lengthPrefixed(compress(chunk.subarray(PREFIX_BYTES)), true);
}
