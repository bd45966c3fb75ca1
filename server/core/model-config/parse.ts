import type { Message, Type } from "protobufjs";
import { fromText } from "protobufjs/ext/textformat";

const TOKENIZER_LINE_SUFFIX = / \(line (\d+)\)$/;

/**
 * Parses protobuf text format (config.pbtxt) into a message of `type`. Every error message starts with
 * `line N: `, then the parser's reason, e.g. `line 3: unknown field 'bogus' (inference.ModelConfig)`.
 */
export function parseTextFormat(type: Type, text: string): Message {
  try {
    return fromText(type, text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const tokenizerLine = TOKENIZER_LINE_SUFFIX.exec(reason);
    const line = tokenizerLine?.[1] !== undefined ? Number(tokenizerLine[1]) : lineOfValueError(type, text, reason);
    throw new Error(`line ${line}: ${readableReason(reason.replace(TOKENIZER_LINE_SUFFIX, ""))}`, { cause: error });
  }
}

/**
 * protobufjs reports the line only for syntax errors; value errors (bad enum name, out-of-range number,
 * a second oneof member) come without one. The parser reads left to right, so the line is the shortest
 * prefix of the text that fails with the same reason: shorter prefixes parse or end in a syntax error,
 * which always carries a line and so never matches.
 */
function lineOfValueError(type: Type, text: string, reason: string): number {
  const lines = text.split("\n");
  let failingLineCount = lines.length;
  let passingLineCount = 0;
  while (failingLineCount - passingLineCount > 1) {
    const lineCount = Math.floor((passingLineCount + failingLineCount) / 2);
    if (prefixFailsWith(type, lines.slice(0, lineCount).join("\n"), reason)) failingLineCount = lineCount;
    else passingLineCount = lineCount;
  }
  return failingLineCount;
}

function prefixFailsWith(type: Type, prefix: string, reason: string): boolean {
  try {
    fromText(type, prefix);
    return false;
  } catch (error) {
    return error instanceof Error && error.message === reason;
  }
}

/** `.inference.ModelInput.data_type: enum value expected` -> `enum value expected (inference.ModelInput.data_type)`. */
function readableReason(reason: string): string {
  const qualified = /^\.?([\w.]+): (.+)$/s.exec(reason);
  return qualified?.[1] !== undefined && qualified[2] !== undefined ? `${qualified[2]} (${qualified[1]})` : reason;
}
