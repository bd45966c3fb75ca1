import path from "node:path";
import { compileTypeScriptModel } from "../compile-typescript-model";
import { exampleModel, type ExampleModel } from "../example-model";

/**
 * `text_generator`: the example decoupled model (typescript-models/text-generator.ts), a byte-level generator
 * that streams one token per response. Its tensors are named as Triton's generate extension maps them
 * (`text_input`, `text_output`), so `/generate_stream` takes `{"text_input": "...", "max_tokens": 8}`.
 */
export function buildTextGeneratorModel(packageRoot: string): ExampleModel {
  const compiled = compileTypeScriptModel(path.join(packageRoot, "tools", "model-builder", "typescript-models", "text-generator.ts"));
  return exampleModel({
    name: "text_generator", runtime: { backend: "typescript" }, maxBatchSize: 0, decoupled: true,
    inputs: [{ name: "text_input", dataType: "TYPE_STRING", dims: [1] }],
    outputs: [{ name: "text_output", dataType: "TYPE_STRING", dims: [1] }],
    instanceGroups: [{ count: 1, kind: "KIND_CPU" }],
  }, { "model.js": compiled });
}
