const LONG_INTEGER = /-?\d{16,}/;
/** Object key that cannot come from the server: JSON text never holds a raw NUL. */
const MARKER = "\u0000bigint";

/**
 * JSON.parse that returns integers too long for a double as `bigint`, so INT64/UINT64 tensor data in a JSON
 * response keeps every digit the server wrote. The text is scanned token by token (string contents are never
 * touched); only responses that contain a 16+ digit run pay for the rewrite.
 */
export function parseJsonWithBigInts(text: string): unknown {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  let rewritten = "";
  let copiedUpTo = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      // Skip the whole string literal, escapes included.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const token = text.slice(i, end);
      if (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) {
        rewritten += `${text.slice(copiedUpTo, i)}{"\\u0000bigint":"${token}"}`;
        copiedUpTo = end;
      }
      i = end - 1;
    }
  }
  rewritten += text.slice(copiedUpTo);
  return JSON.parse(rewritten, (_key, value: unknown) =>
    typeof value === "object" && value !== null && MARKER in value ? BigInt((value as Record<string, string>)[MARKER]!) : value);
}
