import { parseModelConfigText } from "../../server/core/model-config/parse";
import { messagesOf, scalarValue, scanTextFormat, type TextField, type TextValue } from "./pbtxt-fields";
import type { TunedSettings } from "./tuned-settings";

/** One tuned field that differs from the starting configuration, for comments and reports. */
export interface ConfigChange {
  readonly field: string;
  readonly from: string;
  readonly to: string;
}

interface TextEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

type MessageValue = Extract<TextValue, { kind: "message" }>;

/** Every comment line inference-tune writes starts with this, so a re-tuned file loses the old ones. */
export const TUNE_COMMENT = "# inference-tune:";
const INDENT = "  ";

/** Applies non-overlapping edits; edits at the same position keep their order. */
function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const ordered = edits.map((edit, order) => ({ edit, order })).sort((a, b) => b.edit.start - a.edit.start || b.order - a.order);
  let result = text;
  let limit = Infinity;
  for (const { edit } of ordered) {
    if (edit.end > limit) throw new Error("inference-tune: overlapping config edits");
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
    limit = edit.start;
  }
  return result;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

function startsLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === "";
}

function indentAt(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];
}

/** A field's text with any separator, and its whole lines when it has them to itself. */
function removal(text: string, field: TextField): TextEdit {
  let start = field.range.start;
  let end = field.separatorEnd;
  const lineEnd = text.indexOf("\n", end);
  if (startsLine(text, start) && text.slice(end, lineEnd === -1 ? text.length : lineEnd).trim() === "") {
    start = lineStart(text, start);
    end = lineEnd === -1 ? text.length : lineEnd + 1;
  }
  return { start, end, text: "" };
}

/** Adds `line` as the first field of a message, on a line of its own when the message spans lines. */
function insertion(text: string, message: MessageValue, line: string): TextEdit {
  const open = message.range.start;
  const first = message.fields[0];
  if (first !== undefined && startsLine(text, first.range.start) && lineStart(text, first.range.start) > open) {
    const at = lineStart(text, first.range.start);
    return { start: at, end: at, text: `${indentAt(text, first.range.start)}${line}\n` };
  }
  const inside = text.slice(open + 1, message.range.end - 1);
  if (first === undefined && inside.includes("\n")) {
    return { start: open + 1, end: open + 1, text: `\n${indentAt(text, open)}${INDENT}${line}` };
  }
  return { start: open + 1, end: open + 1, text: ` ${line}${/^\s/.test(inside) ? "" : " "}` };
}

/** Sets a scalar field of a message: replaces the first occurrence (dropping repeats) or adds it. */
function setField(text: string, message: MessageValue, name: string, value: string): TextEdit[] {
  const existing = message.fields.filter((field) => field.name === name);
  if (existing.length === 0) return [insertion(text, message, `${name}: ${value}`)];
  const [first, ...repeats] = existing;
  return [{ start: first!.value.range.start, end: first!.value.range.end, text: value }, ...repeats.map((field) => removal(text, field))];
}

function commentLines(indent: string, lines: readonly string[]): string {
  return lines.map((line) => `${indent}${TUNE_COMMENT} ${line}\n`).join("");
}

/** Comment lines above a top-level field (or before it, on a line of their own, when the line is shared). */
function commentAbove(text: string, field: TextField, lines: readonly string[]): TextEdit {
  if (startsLine(text, field.range.start)) {
    const at = lineStart(text, field.range.start);
    return { start: at, end: at, text: commentLines(indentAt(text, field.range.start), lines) };
  }
  return { start: field.range.start, end: field.range.start, text: `\n${commentLines("", lines)}` };
}

function quoted(text: string): string {
  return JSON.stringify(text);
}

/** Everything the editor needs to know about the starting configuration and the machine. */
export interface TuneEditContext {
  /** The settings the starting configuration ran with (its effective configuration). */
  readonly start: TunedSettings;
  /** CPU cores, for the server's default intra-op threads (cores / instances). */
  readonly cores: number;
  /** Model name, for error messages. */
  readonly modelName: string;
}

/**
 * The user's config.pbtxt with the tuned fields set to `tuned`, each changed field preceded by a comment naming its
 * old value, and `header` comment lines on top; fields, comments and layout that inference-tune does not tune stay
 * exactly as written. Comment lines of an earlier inference-tune run are dropped. The result is checked with the
 * server's own config parser; a failure there is a bug, and throws.
 */
export function tunedConfigText(
  userText: string, tuned: TunedSettings, context: TuneEditContext, header: readonly string[],
): { text: string; changes: ConfigChange[] } {
  const text = userText.split("\n").filter((line) => !line.trimStart().startsWith(TUNE_COMMENT)).join("\n");
  const fields = scanTextFormat(text);
  const top = (name: string): TextField[] => fields.filter((field) => field.name === name);
  const start = context.start;
  const edits: TextEdit[] = [];
  const changes: ConfigChange[] = [];
  const appended: string[] = [];
  const notes = new Map<TextField, string[]>();
  const change = (field: string, from: string, to: string, where: TextField | undefined): string => {
    changes.push({ field, from, to });
    const note = `${field} ${from} -> ${to}`;
    if (where !== undefined) notes.set(where, [...(notes.get(where) ?? []), note]);
    return note;
  };

  if (tuned.maxBatchSize !== start.maxBatchSize) {
    const [field] = top("max_batch_size");
    const note = change("max_batch_size", String(start.maxBatchSize), String(tuned.maxBatchSize), field);
    if (field !== undefined) edits.push({ start: field.value.range.start, end: field.value.range.end, text: String(tuned.maxBatchSize) });
    else appended.push(`${commentLines("", [note])}max_batch_size: ${tuned.maxBatchSize}`);
  }

  const kind = tuned.device.kind;
  if (tuned.instanceCount !== start.instanceCount || kind !== start.device.kind) {
    const groupFields = top("instance_group");
    const groups = groupFields.flatMap(messagesOf);
    const block = `instance_group [\n${INDENT}{\n${INDENT}${INDENT}count: ${tuned.instanceCount}\n${INDENT}${INDENT}kind: ${kind}\n${INDENT}}\n]`;
    if (groups.length === 1) {
      if (tuned.instanceCount !== start.instanceCount) {
        change("instance_group count", String(start.instanceCount), String(tuned.instanceCount), groupFields[0]);
        edits.push(...setField(text, groups[0]!, "count", String(tuned.instanceCount)));
      }
      if (kind !== start.device.kind) {
        change("instance_group kind", start.device.kind, kind, groupFields[0]);
        edits.push(...setField(text, groups[0]!, "kind", kind));
      }
    } else {
      const from = groups.length === 0 ? `${start.instanceCount} x ${start.device.kind} (server default)` : `${groups.length} groups, ${start.instanceCount} instances`;
      const note = change("instance_group", from, `${tuned.instanceCount} x ${kind}`, undefined);
      const [first, ...others] = groupFields;
      if (first === undefined) appended.push(`${commentLines("", [note])}${block}`);
      else {
        edits.push({ start: first.range.start, end: first.separatorEnd, text: block }, ...others.map((field) => removal(text, field)));
        notes.set(first, [note]);
      }
    }
  }

  if (tuned.intraOpThreads !== undefined) {
    const parameterFields = top("parameters");
    const entry = parameterFields.flatMap((field) => messagesOf(field).map((message) => ({ field, message })))
      .find(({ message }) => message.fields.some((f) => f.name === "key" && scalarValue(f.value) === "intra_op_thread_count"));
    const valueMessage = entry?.message.fields.find((f) => f.name === "value")?.value;
    const stringValue = valueMessage?.kind === "message" ? valueMessage.fields.find((f) => f.name === "string_value") : undefined;
    const written = stringValue === undefined ? undefined : Number(scalarValue(stringValue.value));
    const serverDefault = Math.max(1, Math.floor(context.cores / tuned.instanceCount));
    const effective = written ?? serverDefault;
    // Where the server's default (cores / instances) already gives the tuned value, the config leaves it to the
    // server, so it keeps scaling with the machine it is deployed on.
    if (tuned.intraOpThreads !== effective) {
      const from = written !== undefined ? String(written) : `${start.intraOpThreads ?? serverDefault} (server default)`;
      const note = change("intra_op_thread_count", from, String(tuned.intraOpThreads), entry?.field);
      if (stringValue !== undefined) {
        edits.push({ start: stringValue.value.range.start, end: stringValue.value.range.end, text: quoted(String(tuned.intraOpThreads)) });
      } else if (entry !== undefined) {
        edits.push({ start: entry.message.range.start, end: entry.message.range.end, text: `{ key: "intra_op_thread_count" value { string_value: ${quoted(String(tuned.intraOpThreads))} } }` });
      } else {
        appended.push(`${commentLines("", [note])}parameters {\n${INDENT}key: "intra_op_thread_count"\n${INDENT}value { string_value: ${quoted(String(tuned.intraOpThreads))} }\n}`);
      }
    }
  }

  const batching = tuned.dynamicBatching;
  if (batching !== undefined) {
    const [field] = top("dynamic_batching");
    const message = field?.value.kind === "message" ? field.value : undefined;
    const fromDelay = start.dynamicBatching?.maxQueueDelayUs;
    const fromPreferred = start.dynamicBatching?.preferredBatchSizes ?? [];
    const preferredText = (sizes: readonly number[]): string => (sizes.length === 0 ? "none" : sizes.join(","));
    const preferredChanged = preferredText(fromPreferred) !== preferredText(batching.preferredBatchSizes);
    if (message === undefined) {
      const lines = [change("dynamic_batching", "off", `max_queue_delay_microseconds ${batching.maxQueueDelayUs}`, undefined)];
      if (batching.preferredBatchSizes.length > 0) lines.push(change("preferred_batch_size", "none", preferredText(batching.preferredBatchSizes), undefined));
      const body = [`${INDENT}max_queue_delay_microseconds: ${batching.maxQueueDelayUs}`];
      if (batching.preferredBatchSizes.length > 0) body.push(`${INDENT}preferred_batch_size: [ ${batching.preferredBatchSizes.join(", ")} ]`);
      appended.push(`${commentLines("", lines)}dynamic_batching {\n${body.join("\n")}\n}`);
    } else {
      if (fromDelay !== batching.maxQueueDelayUs) {
        change("max_queue_delay_microseconds", String(fromDelay ?? 0), String(batching.maxQueueDelayUs), field);
        edits.push(...setField(text, message, "max_queue_delay_microseconds", String(batching.maxQueueDelayUs)));
      }
      if (preferredChanged) {
        change("preferred_batch_size", preferredText(fromPreferred), preferredText(batching.preferredBatchSizes), field);
        edits.push(...message.fields.filter((f) => f.name === "preferred_batch_size").map((f) => removal(text, f)));
        if (batching.preferredBatchSizes.length > 0) edits.push(insertion(text, message, `preferred_batch_size: [ ${batching.preferredBatchSizes.join(", ")} ]`));
      }
    }
  }

  if (tuned.device.kind === "KIND_GPU" && (start.device.kind !== "KIND_GPU" || start.device.accelerator !== tuned.device.accelerator)) {
    const accelerator = `gpu_execution_accelerator [ { name: ${quoted(tuned.device.accelerator)} } ]`;
    const [field] = top("optimization");
    const from = start.device.kind === "KIND_GPU" ? start.device.accelerator : "none";
    const note = change("gpu_execution_accelerator", from, tuned.device.accelerator, field);
    const optimization = field?.value.kind === "message" ? field.value : undefined;
    const accelerators = optimization?.fields.find((f) => f.name === "execution_accelerators")?.value;
    if (accelerators?.kind === "message") {
      edits.push(...accelerators.fields.filter((f) => f.name === "gpu_execution_accelerator").map((f) => removal(text, f)), insertion(text, accelerators, accelerator));
    } else if (optimization !== undefined) {
      edits.push(insertion(text, optimization, `execution_accelerators { ${accelerator} }`));
    } else {
      appended.push(`${commentLines("", [note])}optimization {\n${INDENT}execution_accelerators {\n${INDENT}${INDENT}${accelerator}\n${INDENT}}\n}`);
    }
  }

  for (const [field, lines] of notes) edits.push(commentAbove(text, field, lines));
  let result = applyEdits(text, edits);
  if (appended.length > 0) result = `${result}${result === "" || result.endsWith("\n") ? "" : "\n"}${appended.join("\n")}\n`;
  result = `${commentLines("", header)}${result}`;
  parseModelConfigText(result, `model '${context.modelName}': tuned config.pbtxt`);
  return { text: result, changes };
}
