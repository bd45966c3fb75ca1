/**
 * JSON.parse that keeps integers too long for a double exact (as bigint), so INT64/UINT64 tensor data survives
 * a JSON request the way it does in Triton.
 */

/**
 * A cheap pre-check: an integer token of 16+ digits between JSON delimiters. It may also match inside a string
 * (then the careful pass below finds nothing to change); fractional digits of floats never match it, so ordinary
 * FP32 bodies keep the plain, fast JSON.parse.
 */
const LONG_INTEGER_CANDIDATE = /[[,:]\s*-?\d{16,}\s*[,\]}]/;
const MIN_DIGITS = 16;

/** The marker is written as a JSON escape: no client string can become an object with this key. */
const MARKER_KEY = "\u0000int";

export function parseExactJson(text: string): unknown {
  if (!LONG_INTEGER_CANDIDATE.test(text)) return JSON.parse(text);
  return JSON.parse(markLongIntegers(text), (_key, value: unknown) => {
    if (typeof value === "object" && value !== null && MARKER_KEY in value) {
      return BigInt((value as Record<string, string>)[MARKER_KEY]!);
    }
    return value;
  });
}

/** A parsed value as error messages quote it: JSON, with the parser's bigints written as their digits. */
export function jsonText(value: unknown): string {
  if (typeof value === "bigint") return String(value);
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? String(item) : item)) ?? String(value);
}

const QUOTE = 34;
const BACKSLASH = 92;
const MINUS = 45;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isNumberPart = (code: number): boolean => isDigit(code) || code === 46 || code === 101 || code === 69 || code === 43 || code === MINUS;

/** Wraps each long integer token outside strings as `{"\u0000int":"<digits>"}`, leaving everything else as is. */
function markLongIntegers(text: string): string {
  let out = "";
  let copiedUpTo = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      continue;
    }
    if (code !== MINUS && !isDigit(code)) continue;
    let end = code === MINUS ? i + 1 : i;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    const digits = end - (code === MINUS ? i + 1 : i);
    let tokenEnd = end;
    while (tokenEnd < text.length && isNumberPart(text.charCodeAt(tokenEnd))) tokenEnd++;
    if (tokenEnd === end && digits >= MIN_DIGITS) {
      out += `${text.slice(copiedUpTo, i)}{"\\u0000int":"${text.slice(i, end)}"}`;
      copiedUpTo = end;
    }
    i = tokenEnd - 1;
  }
  return out + text.slice(copiedUpTo);
}
