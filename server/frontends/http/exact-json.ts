import { randomUUID } from "node:crypto";

/**
 * JSON.parse that reads numbers as Triton's rapidjson does (kParseNanAndInfFlag): integers too long for a double
 * stay exact (as bigint), so INT64/UINT64 tensor data survives a JSON request, and `NaN`, `Inf`, `Infinity` and
 * their negatives are numbers, so FP tensors written by Python's json module (tritonclient) are read.
 */

/**
 * A cheap pre-check: an integer token of 16+ digits between JSON delimiters, or a NaN/Inf name. It may also match
 * inside a string (then the careful pass below finds nothing to change); fractional digits of floats never match
 * it, so ordinary FP32 bodies keep the plain, fast JSON.parse.
 */
const SPECIAL_NUMBER_CANDIDATE = /[[,:]\s*-?(?:\d{16,}\s*[,\]}]|NaN|Inf)/;
const MIN_DIGITS = 16;
const NAMED_NUMBER = /NaN|Infinity|Inf/y;

export function parseExactJson(text: string): unknown {
  if (!SPECIAL_NUMBER_CANDIDATE.test(text)) return JSON.parse(text);
  // A fresh key per parse: a client cannot write an object the reviver would mistake for a marker.
  const markerKey = `\u0000${randomUUID()}`;
  return JSON.parse(markSpecialNumbers(text, `\\u0000${markerKey.slice(1)}`), (_key, value: unknown) => {
    if (typeof value !== "object" || value === null || !(markerKey in value)) return value;
    return numberOf((value as Record<string, string>)[markerKey]!);
  });
}

function numberOf(token: string): number | bigint {
  const negative = token.startsWith("-");
  const name = negative ? token.slice(1) : token;
  if (name === "NaN") return Number.NaN;
  if (name.startsWith("Inf")) return negative ? -Infinity : Infinity;
  return BigInt(token);
}

/** The text of a parsed request value for an error message: bigints as their digits, NaN and infinities by name. */
export function jsonText(value: unknown): string {
  if (typeof value === "bigint" || (typeof value === "number" && !Number.isFinite(value))) return String(value);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? String(v) : v)) ?? String(value);
}

const QUOTE = 34;
const BACKSLASH = 92;
const MINUS = 45;
const CAPITAL_I = 73;
const CAPITAL_N = 78;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isNumberPart = (code: number): boolean => isDigit(code) || code === 46 || code === 101 || code === 69 || code === 43 || code === MINUS;

/**
 * Wraps each long integer token and each NaN/Inf name outside strings as `{"<marker>":"<token>"}`, leaving
 * everything else as is (a malformed name is left for JSON.parse to report).
 */
function markSpecialNumbers(text: string, markerJson: string): string {
  let out = "";
  let copiedUpTo = 0;
  const mark = (start: number, end: number): void => {
    out += `${text.slice(copiedUpTo, start)}{"${markerJson}":"${text.slice(start, end)}"}`;
    copiedUpTo = end;
  };
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      continue;
    }
    if (code !== MINUS && code !== CAPITAL_N && code !== CAPITAL_I && !isDigit(code)) continue;
    const first = code === MINUS ? i + 1 : i;
    const firstCode = text.charCodeAt(first);
    if (firstCode === CAPITAL_N || firstCode === CAPITAL_I) {
      NAMED_NUMBER.lastIndex = first;
      const name = NAMED_NUMBER.exec(text);
      if (name !== null) {
        mark(i, first + name[0].length);
        i = copiedUpTo - 1;
      }
      continue;
    }
    let end = first;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    let tokenEnd = end;
    while (tokenEnd < text.length && isNumberPart(text.charCodeAt(tokenEnd))) tokenEnd++;
    if (tokenEnd === end && end - first >= MIN_DIGITS) mark(i, end);
    i = Math.max(i, tokenEnd - 1);
  }
  return out + text.slice(copiedUpTo);
}
