import type { Message, Type } from "protobufjs";
import { fromJson } from "protobufjs/ext/protojson";
import { fromText } from "protobufjs/ext/textformat";
import { modelConfigFromMessage } from "./defaults";
import type { ModelConfig } from "./model-config";
import { modelConfigSchema } from "./schema";

const TOKENIZER_LINE_SUFFIX = / \(line (\d+)\)$/;

/**
 * Parses a `config.pbtxt`. `sourceName` starts every error message, which then gives the line, e.g.
 * `model 'x': config.pbtxt line 3: unknown field 'bogus' (inference.ModelConfig)`. Throws on syntax
 * errors, unknown fields, bad enum names, out-of-range numbers and a second member of a oneof.
 * Semantic checks (required fields, dims >= 1, ...) are the caller's.
 */
export function parseModelConfigText(text: string, sourceName: string): ModelConfig {
  const { modelConfigType } = modelConfigSchema();
  let message: Message;
  try {
    message = parseTextFormat(modelConfigType, text);
  } catch (error) {
    throw new Error(`${sourceName} ${(error as Error).message}`, { cause: error });
  }
  return modelConfigFromMessage(message, sourceName);
}

/**
 * Reads a config given as JSON in Triton's form (`GET .../config` output, or the repository load API's
 * `config` parameter once parsed): proto field names or their lowerCamelCase forms, enums as names or
 * numbers, 64-bit integers as numbers or strings. Throws, prefixed with `sourceName: `, on unknown
 * fields, bad values and anything that is not an object.
 */
export function modelConfigFromJson(json: unknown, sourceName: string): ModelConfig {
  const { modelConfigType } = modelConfigSchema();
  let message: Message;
  try {
    message = fromJson(modelConfigType, json);
  } catch (error) {
    throw new Error(`${sourceName}: ${(error as Error).message.replace(/^\./, "")}`, { cause: error });
  }
  return modelConfigFromMessage(message, sourceName);
}

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
