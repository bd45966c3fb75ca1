import { promisify } from "node:util";
import zlib from "node:zlib";
import { InferenceError } from "../../core/index";
import { CorruptCompressedData, inflateChecked } from "../inflate-checked";
import type { BudgetLease } from "../request-bytes-budget";

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

/**
 * Inflates `body`, holding what it has produced (beside the compressed body, already held), and its chunks' join,
 * against `lease` as it goes: a small bomb is refused once its output passes --http-max-input-size (Triton's 400 and text,
 * DataCompressor::DecompressData) or the in-flight budget (503, or 400 past the whole budget), without producing the
 * rest. Counting the output only once whole let 24 bombs of 65 KB take 3 GB under a 256 MiB budget.
 */
async function inflateHeld(body: Buffer, encoding: "gzip" | "deflate", maxBytes: number, lease: BudgetLease | undefined): Promise<Buffer> {
  try {
    return await inflateChecked(body, encoding, (produced, joined) => {
      if (produced > maxBytes) {
        throw new InferenceError("INVALID_ARG", `Decompressed data size exceeds the maximum allowed value of ${maxBytes} bytes. Use --http-max-input-size to increase the limit.`);
      }
      lease?.holdAtLeast(body.byteLength + produced + joined);
    });
  } catch (error) {
    if (error instanceof CorruptCompressedData) throw new InferenceError("INVALID_ARG", `failed to decompress the ${encoding} request body: ${error.message}`);
    throw error;
  }
}

/**
 * Undoes `Content-Encoding: gzip|deflate` on a request body, its output bounded by `maxBytes` (Triton's
 * --http-max-input-size also bounds it) and held against the request's budget `lease` as it is produced.
 */
export async function decodeRequestBody(received: Buffer | undefined, contentEncoding: string | undefined, maxBytes: number, lease?: BudgetLease): Promise<Buffer> {
  // Fastify parses no body, and leaves it undefined, for a request without one (no Content-Type, no bytes).
  const body = received ?? Buffer.alloc(0);
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding === undefined || encoding === "" || encoding === "identity") return body;
  if (encoding === "gzip" || encoding === "deflate") return inflateHeld(body, encoding, maxBytes, lease);
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
