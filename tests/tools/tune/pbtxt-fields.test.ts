import { describe, expect, it } from "vitest";
import { messagesOf, scalarValue, scanTextFormat } from "../../../tools/tune/pbtxt-fields";

describe("scanTextFormat", () => {
  it("finds every top-level field with the exact text of its value, through comments, lists and nested messages", () => {
    const text = [
      "# a comment with { braces [ and \"quotes",
      'name: "m" # trailing comment',
      "max_batch_size : 8",
      "instance_group [ { count: 2, kind: KIND_CPU }, { count: 1 } ]",
      'parameters { key: "intra_op_thread_count" value: { string_value: "4" } };',
      "dynamic_batching < max_queue_delay_microseconds: 100 preferred_batch_size: [ 4, 8 ] >",
      'label: "a" \'b\'',
      "",
    ].join("\n");
    const fields = scanTextFormat(text);
    expect(fields.map((field) => field.name)).toEqual(["name", "max_batch_size", "instance_group", "parameters", "dynamic_batching", "label"]);
    const slice = (range: { start: number; end: number }): string => text.slice(range.start, range.end);
    expect(slice(fields[1]!.value.range)).toBe("8");
    expect(slice(fields[2]!.range)).toBe("instance_group [ { count: 2, kind: KIND_CPU }, { count: 1 } ]");
    expect(messagesOf(fields[2]!).map((group) => group.fields.map((f) => `${f.name}=${slice(f.value.range)}`))).toEqual([["count=2", "kind=KIND_CPU"], ["count=1"]]);
    expect(text.slice(fields[3]!.range.end, fields[3]!.separatorEnd)).toBe(";");
    const entry = messagesOf(fields[3]!)[0]!;
    expect(scalarValue(entry.fields[0]!.value)).toBe("intra_op_thread_count");
    expect(slice(fields[4]!.value.range)).toBe("< max_queue_delay_microseconds: 100 preferred_batch_size: [ 4, 8 ] >");
    expect(scalarValue(fields[5]!.value)).toBe("ab");
  });

  it("reads an empty document and names the line of a syntax error", () => {
    expect(scanTextFormat("# only a comment\n")).toEqual([]);
    expect(() => scanTextFormat('name: "m"\ninput [ { name: "x" }\n')).toThrow(/^line 3: expected ',' at end of text/);
    expect(() => scanTextFormat('name: "m\n')).toThrow("line 1: unterminated string");
    expect(() => scanTextFormat("a: 1\n} b: 2")).toThrow("line 2: expected a field name at '}'");
  });
});
