import type { OnnxGraph } from "./onnx-model";

/** Drops initializers no node reads any more (passes replace weights by new ones), and graph inputs that shadow them. */
export function pruneUnusedInitializers(graph: OnnxGraph): void {
  const used = new Set([...graph.node.flatMap((node) => node.input), ...graph.output.map((v) => v.name)]);
  const dropped = new Set(graph.initializer.filter((tensor) => !used.has(tensor.name)).map((tensor) => tensor.name));
  graph.initializer = graph.initializer.filter((tensor) => !dropped.has(tensor.name));
  // IR < 4 lists initializers as graph inputs too; those of removed initializers must go as well.
  graph.input = graph.input.filter((value) => !dropped.has(value.name));
}

/**
 * Removes initializers from the graph inputs (IR < 4 models list every weight as an input too): ONNX Runtime treats
 * such weights as overridable inputs, which blocks constant folding and the QDQ fusions that need constant weights.
 */
export function removeInitializerInputs(graph: OnnxGraph): void {
  const initializers = new Set(graph.initializer.map((tensor) => tensor.name));
  graph.input = graph.input.filter((value) => !initializers.has(value.name));
}
