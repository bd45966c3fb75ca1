import { cloneOnnxModel, type OnnxModel } from "./onnx-model";

/**
 * Removes inference-time no-ops (Dropout without a used mask, Identity) by wiring their consumers to their input,
 * as ONNX Runtime's own EliminateDropout/EliminateIdentity do at session start. Done before quantization so that
 * the no-op does not sit between a quantized producer and consumer and keep them apart.
 */
export function eliminateNoOps(source: OnnxModel): OnnxModel {
  const model = cloneOnnxModel(source);
  const graph = model.graph;
  const graphOutputs = new Set(graph.output.map((v) => v.name));
  const used = new Set(graph.node.flatMap((node) => node.input));
  const replacement = new Map<string, string>();
  const resolve = (name: string): string => replacement.get(name) ?? name;
  graph.node = graph.node.filter((node) => {
    if (node.op_type !== "Dropout" && node.op_type !== "Identity") return true;
    const [output, mask] = [node.output[0] ?? "", node.output[1] ?? ""];
    if (graphOutputs.has(output) || (mask !== "" && (used.has(mask) || graphOutputs.has(mask)))) return true;
    replacement.set(output, resolve(node.input[0] ?? ""));
    return false;
  });
  for (const node of graph.node) node.input = node.input.map(resolve);
  return model;
}
