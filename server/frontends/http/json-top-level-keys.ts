import { clipped, invalidArg, requestLogPrefix } from "../../core/index";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index just past the string token that starts at `at` (its opening quote). */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i + 1;
    i += code === BACKSLASH ? 2 : 1;
  }
}

/**
 * The keys of a JSON object's text in the order written, repeats included (JSON.parse keeps only a key's last
 * value, where Triton's TritonJson sees every member). `text` must be valid JSON whose value is an object: only
 * the top level is read, nested values are skipped over.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let keyNext = false;
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (depth === 1 && keyNext) keys.push(JSON.parse(text.slice(i, end)) as string);
      keyNext = false;
      i = end;
      continue;
    }
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth++;
      keyNext = depth === 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--;
    } else if (code === COMMA && depth === 1) {
      keyNext = true;
    } else if (code === COLON) {
      keyNext = false;
    }
    i++;
  }
  return keys;
}

/**
 * Triton's refusal of a generate body that names an input twice (`input 'X' already exists in request`, from
 * InferenceRequest::AddOriginalInput, prefixed with the request's id): the first input repeated, in the body's
 * order. Looks for repeats only where an input's quoted name occurs more than once in the text.
 */
export function refuseRepeatedInputs(text: string, inputNames: readonly string[], requestId: string | undefined): void {
  const suspects = inputNames.filter((name) => {
    const token = JSON.stringify(name);
    const first = text.indexOf(token);
    return first >= 0 && text.includes(token, first + token.length);
  });
  if (suspects.length === 0) return;
  const seen = new Set<string>();
  for (const key of topLevelKeys(text)) {
    if (seen.has(key) && suspects.includes(key)) throw invalidArg(`${requestLogPrefix(requestId)}input '${clipped(key)}' already exists in request`);
    seen.add(key);
  }
}
