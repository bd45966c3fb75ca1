import zlib from "node:zlib";

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
  const decompressor = encoding === "gzip" ? zlib.createGunzip() : zlib.createInflate();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let produced = 0;
    decompressor.on("data", (chunk: Buffer) => {
      produced += chunk.byteLength;
      try {
        check(produced, 0);
      } catch (error) {
        decompressor.destroy();
        reject(error as Error);
        return;
      }
      chunks.push(chunk);
    });
    decompressor.on("end", () => {
      try {
        check(produced, produced);
      } catch (error) {
        reject(error as Error);
        return;
      }
      resolve(Buffer.concat(chunks, produced));
    });
    decompressor.on("error", (error) => reject(new CorruptCompressedData(error.message)));
    decompressor.end(compressed);
  });
}
