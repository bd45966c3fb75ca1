import { type DataType, ELEMENT_BYTE_SIZE } from "../../core/index";
import { parseExactJson } from "./exact-json";
import { assertElementCount, encodeJsonData, numberWriter } from "./json-tensor-data";

/**
 * JSON tensor data read straight from the body's bytes. JSON.parse would make a JS value of every element first
 * (a boxed double, ~90 bytes, for every non-integer; a string and its text for every BYTES element), 5-25x the
 * body for a 64 MiB tensor; here the header is parsed without its inputs' `data` arrays of numbers or of plain
 * strings, and each array is read into the tensor later, once its datatype is known, with JSON.parse's numbers
 * (and exact-json.ts's long integers, NaN and infinities).
 */

/** A `data` array of one input, all numbers or all plain strings, found valid and counted: [start, end) of the body. */
export interface JsonDataArray {
  readonly start: number;
  readonly end: number;
  readonly elements: number;
  /** Strings (then `stringBytes` is their length in all) or numbers (empty arrays too). */
  readonly strings: boolean;
  readonly stringBytes: number;
}

/** The header's text without its inputs' data arrays of numbers or plain strings, and those arrays by input index. */
export interface SplitHeader {
  readonly text: string;
  readonly arrays: ReadonlyMap<number, JsonDataArray>;
}

/** What stands for a cut array in the header's text: a value, so that `"data" in input` still holds. */
const PLACEHOLDER = Buffer.from("0");
/** Deeper arrays are left to the generic path and its error (json-tensor-data.ts refuses past 64). */
const MAX_DEPTH = 32;

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const CAPITAL_N = 78;
const CAPITAL_I = 73;
const SMALL_E = 101;
const CAPITAL_E = 69;
const NAN = Buffer.from("NaN");
const INFINITY = Buffer.from("Infinity");
const INF = Buffer.from("Inf");
const INPUTS = Buffer.from("inputs");
const DATA = Buffer.from("data");

const isDigit = (code: number | undefined): boolean => code !== undefined && code >= 48 && code <= 57;
const isSpace = (code: number | undefined): boolean => code === 32 || code === 10 || code === 13 || code === 9;

/** Gives up the whole split: the header is then parsed as it is. */
class Unsplittable extends Error {}

/** A number token of the JSON body, as exact-json.ts reads it, and where it ends. */
interface NumberToken {
  readonly end: number;
  /** Digits of an integer token without fraction or exponent; 0 for other tokens. */
  readonly integerDigits: number;
  /** NaN or an infinity by name. */
  readonly named: number | undefined;
}

function startsWith(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  if (at + word.byteLength > bytes.byteLength) return false;
  for (let i = 0; i < word.byteLength; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

/**
 * The number token at `at` (JSON's grammar, or NaN, Inf, Infinity with an optional `-`) followed by a delimiter
 * of an array, or undefined for anything else (then JSON.parse and its message decide).
 */
function numberToken(bytes: Uint8Array, at: number, limit: number): NumberToken | undefined {
  let i = at;
  const negative = bytes[i] === MINUS;
  if (negative) i++;
  let named: number | undefined;
  let integerDigits = 0;
  if (bytes[i] === CAPITAL_N || bytes[i] === CAPITAL_I) {
    if (startsWith(bytes, i, NAN)) {
      named = Number.NaN;
      i += NAN.byteLength;
    } else {
      named = negative ? -Infinity : Infinity;
      if (startsWith(bytes, i, INFINITY)) i += INFINITY.byteLength;
      else if (startsWith(bytes, i, INF)) i += INF.byteLength;
      else return undefined;
    }
  } else {
    const first = i;
    if (bytes[i] === ZERO) i++;
    else if (isDigit(bytes[i])) while (i < limit && isDigit(bytes[i])) i++;
    else return undefined;
    integerDigits = i - first;
    if (bytes[i] === DOT) {
      integerDigits = 0;
      if (!isDigit(bytes[++i])) return undefined;
      while (i < limit && isDigit(bytes[i])) i++;
    }
    if (bytes[i] === SMALL_E || bytes[i] === CAPITAL_E) {
      integerDigits = 0;
      i++;
      if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
      if (!isDigit(bytes[i])) return undefined;
      while (i < limit && isDigit(bytes[i])) i++;
    }
  }
  const next = bytes[i];
  if (i >= limit || !(next === COMMA || next === CLOSE_ARRAY || isSpace(next))) return undefined;
  return { end: i, integerDigits, named };
}

function skipSpace(bytes: Uint8Array, at: number, limit: number): number {
  let i = at;
  while (i < limit && isSpace(bytes[i])) i++;
  return i;
}

/**
 * Where the string at `at` ends (after its closing quote) when it is plain: printable ASCII without escapes, whose
 * bytes are the element's bytes as they are; else undefined (JSON.parse reads it).
 */
function plainStringEnd(bytes: Uint8Array, at: number, limit: number): number | undefined {
  for (let i = at + 1; i < limit; i++) {
    const code = bytes[i]!;
    if (code === QUOTE) return i + 1;
    if (code < 0x20 || code >= 0x7f || code === BACKSLASH) return undefined;
  }
  return undefined;
}

/** The array of numbers or of plain strings (nested or flat) at `at`, valid JSON to its closing bracket, or undefined. */
function dataArray(bytes: Uint8Array, at: number, limit: number): JsonDataArray | undefined {
  let depth = 0;
  let elements = 0;
  let numbers = 0;
  let stringBytes = 0;
  let i = at;
  for (;;) {
    // A value is expected at i.
    i = skipSpace(bytes, i, limit);
    if (bytes[i] === OPEN_ARRAY) {
      if (++depth > MAX_DEPTH) return undefined;
      i = skipSpace(bytes, i + 1, limit);
      if (bytes[i] !== CLOSE_ARRAY) continue;
    } else {
      if (depth === 0) return undefined;
      let end: number | undefined;
      if (bytes[i] === QUOTE) {
        end = plainStringEnd(bytes, i, limit);
        if (end !== undefined) stringBytes += end - i - 2;
      } else {
        end = numberToken(bytes, i, limit)?.end;
        numbers++;
      }
      elements++;
      if (end === undefined || (numbers !== 0 && numbers !== elements)) return undefined;
      i = skipSpace(bytes, end, limit);
      if (bytes[i] === COMMA) {
        i++;
        continue;
      }
    }
    // After a value: close arrays until a comma leads to the next value.
    for (;;) {
      if (i >= limit || bytes[i] !== CLOSE_ARRAY) return undefined;
      i++;
      if (--depth === 0) return { start: at, end: i, elements, strings: elements > 0 && numbers === 0, stringBytes };
      i = skipSpace(bytes, i, limit);
      if (bytes[i] === COMMA) {
        i++;
        break;
      }
    }
  }
}

/** Where the string opening at `at` ends (after its closing quote), and whether it holds an escape. */
function skipString(bytes: Uint8Array, at: number, limit: number): { end: number; escaped: boolean } {
  let escaped = false;
  let i = at + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, i);
    if (quote < 0 || quote >= limit) throw new Unsplittable();
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes > 0) escaped = true;
    i = quote + 1;
    if (backslashes % 2 === 0) return { end: i, escaped };
  }
}

/** Where the value at `at` ends; loose inside containers (JSON.parse checks them), exact about strings. */
function skipValue(bytes: Uint8Array, at: number, limit: number): number {
  let depth = 0;
  let i = at;
  while (i < limit) {
    const code = bytes[i]!;
    if (code === QUOTE) {
      i = skipString(bytes, i, limit).end;
      if (depth === 0) return i;
      continue;
    }
    if (code === OPEN_ARRAY || code === OPEN_OBJECT) depth++;
    else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (code === COMMA || isSpace(code))) return i;
    i++;
  }
  return i;
}

/**
 * Walks `{ ..., "inputs": [ { ..., "data": [...] }, ... ] }` through the bytes, calling `found` with each input's
 * index and its data array when it holds numbers or plain strings. Throws Unsplittable for what it cannot be sure of (escaped or
 * repeated keys that matter, a malformed structure): JSON.parse of the whole header then decides as before.
 */
function walkObject(bytes: Uint8Array, at: number, limit: number, onKey: (key: Uint8Array, valueAt: number) => number): number {
  let i = skipSpace(bytes, at + 1, limit);
  if (bytes[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (bytes[i] !== QUOTE) throw new Unsplittable();
    const key = skipString(bytes, i, limit);
    if (key.escaped) throw new Unsplittable();
    const name = bytes.subarray(i + 1, key.end - 1);
    i = skipSpace(bytes, key.end, limit);
    if (bytes[i] !== COLON) throw new Unsplittable();
    i = skipSpace(bytes, onKey(name, skipSpace(bytes, i + 1, limit)), limit);
    if (bytes[i] === CLOSE_OBJECT) return i + 1;
    if (bytes[i] !== COMMA) throw new Unsplittable();
    i = skipSpace(bytes, i + 1, limit);
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.byteLength === b.byteLength && startsWith(a, 0, b);

function findDataArrays(bytes: Uint8Array, limit: number): Map<number, JsonDataArray> {
  const arrays = new Map<number, JsonDataArray>();
  const start = skipSpace(bytes, 0, limit);
  if (bytes[start] !== OPEN_OBJECT) return arrays;
  let inputsSeen = false;
  walkObject(bytes, start, limit, (key, at) => {
    if (!sameBytes(key, INPUTS)) return skipValue(bytes, at, limit);
    if (inputsSeen) throw new Unsplittable();
    inputsSeen = true;
    if (bytes[at] !== OPEN_ARRAY) return skipValue(bytes, at, limit);
    let i = skipSpace(bytes, at + 1, limit);
    if (bytes[i] === CLOSE_ARRAY) return i + 1;
    for (let index = 0; ; index++) {
      if (bytes[i] === OPEN_OBJECT) {
        let dataSeen = false;
        i = walkObject(bytes, i, limit, (inputKey, valueAt) => {
          if (!sameBytes(inputKey, DATA)) return skipValue(bytes, valueAt, limit);
          if (dataSeen) throw new Unsplittable();
          dataSeen = true;
          const array = bytes[valueAt] === OPEN_ARRAY ? dataArray(bytes, valueAt, limit) : undefined;
          if (array === undefined) return skipValue(bytes, valueAt, limit);
          arrays.set(index, array);
          return array.end;
        });
      } else {
        i = skipValue(bytes, i, limit);
      }
      i = skipSpace(bytes, i, limit);
      if (bytes[i] === CLOSE_ARRAY) return i + 1;
      if (bytes[i] !== COMMA) throw new Unsplittable();
      i = skipSpace(bytes, i + 1, limit);
    }
  });
  return arrays;
}

/** The first `length` bytes of `body` as the header's text, its inputs' data arrays of numbers or plain strings cut out. */
export function splitHeader(body: Uint8Array, length: number): SplitHeader {
  const whole = Buffer.from(body.buffer, body.byteOffset, length);
  let arrays: Map<number, JsonDataArray>;
  try {
    arrays = findDataArrays(whole, length);
  } catch (error) {
    if (!(error instanceof Unsplittable)) throw error;
    arrays = new Map();
  }
  if (arrays.size === 0) return { text: whole.toString("utf8"), arrays };
  const pieces: Buffer[] = [];
  let copiedUpTo = 0;
  for (const array of arrays.values()) {
    pieces.push(whole.subarray(copiedUpTo, array.start), PLACEHOLDER);
    copiedUpTo = array.end;
  }
  pieces.push(whole.subarray(copiedUpTo));
  return { text: Buffer.concat(pieces).toString("utf8"), arrays };
}

/** The value JSON.parse (exact-json.ts) gives a token: a number, or a bigint for an integer of 16+ digits. */
function tokenValue(bytes: Buffer, start: number, token: NumberToken): number | bigint {
  if (token.named !== undefined) return token.named;
  const negative = bytes[start] === MINUS;
  if (token.integerDigits > 0 && token.integerDigits < 16) {
    let value = 0;
    for (let i = negative ? start + 1 : start; i < token.end; i++) value = value * 10 + bytes[i]! - ZERO;
    return negative ? -value : value;
  }
  const text = bytes.toString("latin1", start, token.end);
  return token.integerDigits > 0 ? BigInt(text) : Number(text);
}

/** Datatypes whose numbers are read here; the others (BOOL, unsupported ones) take the generic path and its messages. */
const NUMERIC: ReadonlySet<DataType> = new Set(["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64", "FP32", "FP64"]);

/** Plain strings -> Triton's BYTES layout (each element's length, then its bytes), as joinBytesStrings would make it. */
function encodeStrings(bytes: Buffer, array: JsonDataArray): Uint8Array {
  // Exactly sized and never pooled, like joinBytesStrings' buffer: it may move to another thread as it is.
  const out = Buffer.allocUnsafeSlow(4 * array.elements + array.stringBytes);
  let offset = 0;
  for (let i = bytes.indexOf(QUOTE, array.start); i >= 0; i = bytes.indexOf(QUOTE, i + 1)) {
    const end = bytes.indexOf(QUOTE, i + 1);
    out.writeUInt32LE(end - i - 1, offset);
    offset += 4 + bytes.copy(out, offset + 4, i + 1, end);
    i = end;
  }
  return out;
}

/** An input's data array -> the core's little-endian bytes, as encodeJsonData would make them from JSON.parse. */
export function encodeJsonDataArray(datatype: DataType, body: Uint8Array, array: JsonDataArray, elementCount: number, tensorName: string): Uint8Array {
  const bytes = Buffer.from(body.buffer, body.byteOffset, array.end);
  const direct = array.strings ? datatype === "BYTES" : NUMERIC.has(datatype);
  if (!direct) return encodeJsonData(datatype, parseExactJson(bytes.toString("latin1", array.start, array.end)), elementCount, tensorName);
  assertElementCount(array.elements, elementCount, tensorName);
  if (array.strings) return encodeStrings(bytes, array);
  const size = ELEMENT_BYTE_SIZE[datatype];
  const write = numberWriter(datatype, tensorName);
  const out = new Uint8Array(array.elements * size);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (let i = array.start; i < array.end; i++) {
    const code = bytes[i]!;
    if (code === OPEN_ARRAY || code === CLOSE_ARRAY || code === COMMA || isSpace(code)) continue;
    const token = numberToken(bytes, i, array.end)!;
    write(view, offset, tokenValue(bytes, i, token));
    offset += size;
    i = token.end - 1;
  }
  return out;
}
