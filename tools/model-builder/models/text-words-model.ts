import path from "node:path";
import { compileTypeScriptModel } from "../compile-typescript-model";
import { exampleModel, type ExampleModel } from "../example-model";

/**
 * `text_words`: the example streaming BLS model (typescript-models/text-words.ts), which streams `text_generator`'s
 * bytes regrouped into words. Named as `text_generator`'s tensors, so `/generate_stream` takes the same body.
 */
export function buildTextWordsModel(packageRoot: string): ExampleModel {
  const compiled = compileTypeScriptModel(path.join(packageRoot, "tools", "model-builder", "typescript-models", "text-words.ts"));
  return exampleModel({
    name: "text_words", runtime: { backend: "typescript" }, maxBatchSize: 0, decoupled: true,
    inputs: [{ name: "text_input", dataType: "TYPE_STRING", dims: [1] }],
    outputs: [{ name: "text_output", dataType: "TYPE_STRING", dims: [1] }],
    instanceGroups: [{ count: 1, kind: "KIND_CPU" }],
  }, { "model.js": compiled });
}
