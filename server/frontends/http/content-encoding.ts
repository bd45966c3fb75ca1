import { promisify } from "node:util";
import zlib from "node:zlib";
import { InferenceError } from "../../core/index";

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

/**
 * Undoes `Content-Encoding: gzip|deflate` on a request body. The decompressed size is capped by the same limit
 * as the body (Triton's --http-max-input-size also bounds it), so a small bomb cannot expand without bound.
 */
export async function decodeRequestBody(received: Buffer | undefined, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  // Fastify parses no body, and leaves it undefined, for a request without one (no Content-Type, no bytes).
  const body = received ?? Buffer.alloc(0);
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding === undefined || encoding === "" || encoding === "identity") return body;
  const options = { maxOutputLength: maxBytes };
  try {
    if (encoding === "gzip") return await gunzip(body, options);
    if (encoding === "deflate") return await inflate(body, options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_BUFFER_TOO_LARGE") {
      throw new InferenceError("INVALID_ARG", `decompressed request body exceeds the maximum allowed size of ${maxBytes} bytes (--http-max-input-size)`);
    }
    throw new InferenceError("INVALID_ARG", `failed to decompress the ${encoding} request body: ${(error as Error).message}`);
  }
  throw new InferenceError("UNSUPPORTED", `unsupported Content-Encoding '${contentEncoding}' (gzip and deflate are supported)`);
}

/** Picks gzip or deflate from Accept-Encoding, the ones Triton answers with; undefined means send as is. */
export function chooseResponseEncoding(acceptEncoding: string | undefined): "gzip" | "deflate" | undefined {
  if (acceptEncoding === undefined) return undefined;
  const offered = acceptEncoding.split(",").map((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return { name, q: q === undefined ? 1 : Number(q.slice(2)) };
  });
  const pick = offered.filter((o) => (o.name === "gzip" || o.name === "deflate") && o.q > 0).sort((a, b) => b.q - a.q)[0];
  return pick?.name as "gzip" | "deflate" | undefined;
}

export function encodeResponseBody(body: Buffer, encoding: "gzip" | "deflate"): Promise<Buffer> {
  return encoding === "gzip" ? gzip(body) : deflate(body);
}
