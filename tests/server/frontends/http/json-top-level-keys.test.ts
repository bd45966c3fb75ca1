import { describe, expect, it } from "vitest";
import { decodeGenerateBody } from "../../../../server/frontends/http/json-request-worker";
import { topLevelKeys } from "../../../../server/frontends/http/json-top-level-keys";

describe("topLevelKeys", () => {
  it("lists an object's own keys in order, repeats included, skipping nested values and strings", () => {
    const text = '{"a": [1, {"b": 2}], "c\\"d": "x,\\"y\\": {", "e": {"a": {"f": []}}, "a": "again"}';
    expect(topLevelKeys(text)).toEqual(["a", 'c"d', "e", "a"]);
  });
});

describe("a generate body that repeats an input, as Triton refuses it", () => {
  const model = { name: "m", inputs: [{ name: "PROMPT", datatype: "BYTES", shape: [1] }, { name: "STREAM", datatype: "BOOL", shape: [1] }] };
  const decode = (text: string): unknown => {
    try {
      return decodeGenerateBody(Buffer.from(text), model, undefined);
    } catch (error) {
      return (error as Error).message;
    }
  };

  // qa/L0_http/generate_endpoint_test.py (test_duplicate_inputs): the first input repeated, in the body's order.
  it.each([
    ['{"PROMPT": "hello", "STREAM": false, "PROMPT": "duplicate"}', "input 'PROMPT' already exists in request"],
    ['{"PROMPT": "hello", "STREAM": false, "STREAM": false}', "input 'STREAM' already exists in request"],
    ['{"PROMPT": "hello", "STREAM": false, "PROMPT": "duplicate", "STREAM": true}', "input 'PROMPT' already exists in request"],
    ['{"PROMPT": "hello", "STREAM": false, "STREAM": true, "PROMPT": "duplicate"}', "input 'STREAM' already exists in request"],
    ['{"id": "7", "PROMPT": "a", "PROMPT": "b"}', "[request id: 7] input 'PROMPT' already exists in request"],
  ])("%s", (text, message) => {
    expect(decode(text)).toBe(message);
  });

  it("takes a body that only mentions an input's name again in a value or a parameter", () => {
    expect(decode('{"PROMPT": "PROMPT", "STREAM": false, "parameters": {"PROMPT": 1}}')).toMatchObject({ modelName: "m" });
  });
});
