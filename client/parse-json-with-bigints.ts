/**
 * What makes a response need the rewrite, in one scan: a 16+ digit run (an integer that may not fit a double), or
 * a number by name (Triton's rapidjson writes NaN and infinities so, kWriteNanAndInfFlag, as Python's json module does).
 */
const NEEDS_REWRITE = /\d{16,}|NaN|Infinity/;
const NAMED_VALUES: Readonly<Record<string, number>> = { "NaN": Number.NaN, "Infinity": Infinity, "-Infinity": -Infinity };
/** Object key that cannot come from the server: JSON text never holds a raw NUL. */
const MARKER = "\u0000bigint";

/**
 * JSON.parse that returns integers too long for a double as `bigint`, so INT64/UINT64 tensor data in a JSON
 * response keeps every digit the server wrote, and reads the `NaN`, `Infinity` and `-Infinity` Triton writes
 * for such FP values. The text is scanned token by token (string contents are never touched); only responses
 * that contain a 16+ digit run or one of those names pay for the rewrite.
 */
export function parseJsonWithBigInts(text: string): unknown {
  if (!NEEDS_REWRITE.test(text)) return JSON.parse(text);
  let rewritten = "";
  let copiedUpTo = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      // Skip the whole string literal, escapes included.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (char === "-" || char === "N" || char === "I" || (char !== undefined && char >= "0" && char <= "9")) {
      let end = i + 1;
      while (end < text.length && /[0-9A-Za-z.+-]/.test(text[end]!)) end++;
      const token = text.slice(i, end);
      const exact = (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) || token in NAMED_VALUES;
      if (exact) {
        rewritten += `${text.slice(copiedUpTo, i)}{"\\u0000bigint":"${token}"}`;
        copiedUpTo = end;
      }
      i = end - 1;
    }
  }
  rewritten += text.slice(copiedUpTo);
  return JSON.parse(rewritten, (_key, value: unknown) => {
    if (typeof value !== "object" || value === null || !(MARKER in value)) return value;
    const token = (value as Record<string, string>)[MARKER]!;
    return NAMED_VALUES[token] ?? BigInt(token);
  });
}
