/**
 * JSON.parse that keeps integers too long for a double exact (as bigint), so INT64/UINT64 tensor data survives
 * a JSON request the way it does in Triton. Only bodies that contain such a run of digits pay for the rewrite.
 */
const LONG_INTEGER = /\d{16,}/;
const LONG_INTEGER_TOKEN = /(?<=[[,:]\s*)(-?\d{16,})(?=\s*[,\]}])/g;
const MARKER = "\u0000int";

export function parseExactJson(text: string): unknown {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  // The marker is written as a JSON escape: no client string can turn into an object with that key.
  return JSON.parse(text.replace(LONG_INTEGER_TOKEN, '{"\\u0000int":"$1"}'), (_key, value: unknown) => {
    if (typeof value === "object" && value !== null && MARKER in value) {
      return BigInt((value as Record<string, string>)[MARKER]!);
    }
    return value;
  });
}
