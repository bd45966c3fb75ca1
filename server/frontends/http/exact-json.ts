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

/**
 * What a NaN becomes before JSON.parse: `-0`, shorter than the name, which a reviver turns back into NaN, so that
 * a body of millions of NaN (FP tensors of Python's json) costs no more than its numbers would. Only when the text
 * has no `-0` of its own; then NaN is marked as a long integer is, an object per token.
 */
const NAN_STAND_IN = "-0";

export function parseExactJson(text: string): unknown {
  if (!SPECIAL_NUMBER_CANDIDATE.test(text)) return JSON.parse(text);
  try {
    // A fresh key per parse: a client cannot write an object the reviver would mistake for a marker.
    return parseMarked(text, `\u0000${randomUUID()}`);
  } catch (error) {
    // V8 (Node 22) quotes the text around a fault in its message: quoted with a marker that is the same for every
    // parse, the client reads the same message each time (a fault never depends on what the markers hold).
    parseMarked(text, "\u0000");
    throw error;
  }
}

function parseMarked(text: string, markerKey: string): unknown {
  const markerJson = `\\u0000${markerKey.slice(1)}`;
  const marked = markSpecialNumbers(text, markerJson, NAN_STAND_IN) ?? markSpecialNumbers(text, markerJson, undefined)!;
  // A reviver runs for every value, slowly (JSON.parse's generic path): only where objects must become numbers.
  if (!marked.objects) return marked.nanStandIns ? restoreNaN(JSON.parse(marked.text)) : JSON.parse(marked.text);
  return JSON.parse(marked.text, (_key, value: unknown) => {
    if (typeof value === "number") return marked.nanStandIns && Object.is(value, -0) ? Number.NaN : value;
    if (typeof value !== "object" || value === null || !(markerKey in value)) return value;
    return numberOf((value as Record<string, string>)[markerKey]!);
  });
}

/** Turns every NaN stand-in (a -0, which the text had none of) of a parsed value back into NaN, in place. */
function restoreNaN(value: unknown): unknown {
  if (typeof value === "number") return Object.is(value, -0) ? Number.NaN : value;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      if (typeof element === "number") {
        if (element === 0 && 1 / element < 0) value[i] = Number.NaN;
      } else if (typeof element === "object") {
        restoreNaN(element);
      }
    }
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) record[key] = restoreNaN(record[key]);
  return value;
}

/** A marked token's number: NaN (marked when the text has a `-0` of its own) or a long integer. */
function numberOf(token: string): number | bigint {
  return token.endsWith("NaN") ? Number.NaN : BigInt(token);
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

/** The text JSON.parse reads, and whether a reviver must turn markers and NaN stand-ins back into numbers. */
interface MarkedText {
  readonly text: string;
  readonly objects: boolean;
  readonly nanStandIns: boolean;
}

/** Whether the number token [start, end) reads as a negative zero (`-0`, `-0.0`, `-0e5`, `-1e-400`...). */
function isNegativeZero(text: string, start: number, end: number): boolean {
  return text.charCodeAt(start) === MINUS && Object.is(Number(text.slice(start, end)), -0);
}

/**
 * Wraps each long integer token outside strings as `{"<marker>":"<token>"}`, writes infinities as `1e999` (which
 * JSON.parse reads as Infinity) and NaN as `nanStandIn` (or marked, when undefined), leaving everything else as is
 * (a malformed name is left for JSON.parse to report). Undefined when the text has a `-0` of its own, which the
 * NaN stand-in would be taken for.
 */
function markSpecialNumbers(text: string, markerJson: string, nanStandIn: string | undefined): MarkedText | undefined {
  let out = "";
  let copiedUpTo = 0;
  let objects = false;
  let nanStandIns = false;
  const replace = (start: number, end: number, by: string): void => {
    out += text.slice(copiedUpTo, start) + by;
    copiedUpTo = end;
  };
  const mark = (start: number, end: number): void => {
    replace(start, end, `{"${markerJson}":"${text.slice(start, end)}"}`);
    objects = true;
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
        const end = first + name[0].length;
        if (name[0] !== "NaN") replace(i, end, code === MINUS ? "-1e999" : "1e999");
        else if (nanStandIn === undefined) mark(i, end);
        else {
          replace(i, end, nanStandIn);
          nanStandIns = true;
        }
        i = copiedUpTo - 1;
      }
      continue;
    }
    let end = first;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    let tokenEnd = end;
    while (tokenEnd < text.length && isNumberPart(text.charCodeAt(tokenEnd))) tokenEnd++;
    if (tokenEnd === end && end - first >= MIN_DIGITS) mark(i, end);
    else if (nanStandIn !== undefined && isNegativeZero(text, i, tokenEnd)) return undefined;
    i = Math.max(i, tokenEnd - 1);
  }
  return { text: out + text.slice(copiedUpTo), objects, nanStandIns };
}
