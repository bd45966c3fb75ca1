import zlib from "node:zlib";
import { releaseMemoryNow } from "./release-memory";

/** zlib's output buffer: at least release-memory.ts's smallest, so that what it produced can be freed at once. */
const OUTPUT_CHUNK_BYTES = 1024 * 1024;

/** The compressed bytes are not a valid gzip or deflate stream (or end early). */
export class CorruptCompressedData extends Error {}

/**
 * Inflates a gzip or deflate buffer chunk by chunk, calling `check` with the bytes produced so far before each chunk
 * is kept (`joinedBytes` 0), and once more before the chunks are joined into one buffer, which holds them twice a
 * moment (`joinedBytes` the whole output). What `check` throws stops the inflation there, so the rest of a bomb is
 * never produced, and rejects with it; a stream that is not valid rejects with {@link CorruptCompressedData}. Shared
 * by the HTTP bodies' and the gRPC messages' decompression, each of which counts the output against its limits and
 * the in-flight budget.
 */
export function inflateChecked(compressed: Buffer, encoding: "gzip" | "deflate", check: (producedBytes: number, joinedBytes: number) => void): Promise<Buffer> {
  // Output in slices of 1 MiB buffers of their own, which can be freed at once (releaseMemoryNow) when the output is
  // refused or joined: zlib's 16 KiB ones were left to the collector, and refused bombs' output outlived their bytes
  // in the budget (24 bombs of 64 MiB under a 256 MiB budget peaked at +470 MiB).
  const options = { chunkSize: OUTPUT_CHUNK_BYTES };
  const decompressor = encoding === "gzip" ? zlib.createGunzip(options) : zlib.createInflate(options);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let produced = 0;
    // Called once zlib writes no more into them: after the end, an error, or destroy() from a 'data' listener.
    const letGoOfChunks = (): void => {
      for (const buffer of new Set(chunks.map((chunk) => chunk.buffer))) releaseMemoryNow(buffer);
      chunks.length = 0;
    };
    decompressor.on("data", (chunk: Buffer) => {
      produced += chunk.byteLength;
      chunks.push(chunk);
      try {
        check(produced, 0);
      } catch (error) {
        decompressor.destroy();
        letGoOfChunks();
        reject(error as Error);
      }
    });
    decompressor.on("end", () => {
      try {
        check(produced, produced);
        resolve(Buffer.concat(chunks, produced));
      } catch (error) {
        reject(error as Error);
      }
      letGoOfChunks();
    });
    decompressor.on("error", (error) => {
      letGoOfChunks();
      reject(new CorruptCompressedData(error.message));
    });
    decompressor.end(compressed);
  });
}
