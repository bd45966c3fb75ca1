import { attribute, intAttr, makeNode, NameAllocator, sortTopologically } from "./graph-edit";
import { cloneOnnxModel, defaultOpsetVersion, type OnnxModel, type OnnxNode } from "./onnx-model";
import { int64Tensor } from "./tensor-data";

/**
 * Per-channel DequantizeLinear (its `axis`) needs opset 13; ONNX Runtime's quantizer upgrades older models with
 * onnx's version converter (quantize.py). This does the same for the operators whose meaning changed between
 * opset 7 and 13 in image models, and refuses models with others it cannot convert safely.
 */
const MINIMUM_QDQ_OPSET = 13;
/** Changed between opset 7 and 13 in ways this pass does not convert. */
const UNSUPPORTED_BELOW_13 = new Set(["Upsample", "Pad", "Split", "Resize", "ReduceSum", "TopK", "Slice", "Scan", "Loop", "If"]);

function dropAttributes(node: OnnxNode, names: readonly string[]): void {
  node.attribute = node.attribute.filter((attr) => !names.includes(attr.name));
}

/** Before 13, Softmax normalizes the input flattened to 2-D at `axis` (default 1); 13 normalizes one axis. */
function softmaxAsFlattened(node: OnnxNode, names: NameAllocator): OnnxNode[] {
  const axis = attribute(node, "axis")?.i ?? 1;
  const input = node.input[0]!;
  const output = node.output[0]!;
  const shape = names.next(`${output}_input_shape`);
  const flat = names.next(`${output}_flattened`);
  const normalized = names.next(`${output}_flat`);
  return [
    makeNode("Shape", [input], [shape]),
    makeNode("Flatten", [input], [flat], [intAttr("axis", axis)]),
    makeNode(node.op_type, [flat], [normalized], [intAttr("axis", 1)], node.name),
    makeNode("Reshape", [normalized, shape], [output]),
  ];
}

/** `axes` moves from an attribute to an input in opset 13 (Squeeze, Unsqueeze). */
function axesAsInput(node: OnnxNode, model: OnnxModel, names: NameAllocator): void {
  const axes = attribute(node, "axes");
  if (axes === undefined) return;
  const name = names.next(`${node.output[0]!}_axes`);
  model.graph.initializer.push(int64Tensor(name, [axes.ints.length], axes.ints));
  node.input = [node.input[0]!, name];
  dropAttributes(node, ["axes"]);
}

/** Clip's `min`/`max` became inputs in opset 11. */
function clipBoundsAsInputs(node: OnnxNode, model: OnnxModel, names: NameAllocator): void {
  const bounds = ["min", "max"].map((key) => attribute(node, key)?.f);
  if (bounds.every((b) => b === undefined)) return;
  node.input = [node.input[0]!, ...bounds.map((bound, i) => {
    if (bound === undefined) return "";
    const name = names.next(`${node.output[0]!}_${i === 0 ? "min" : "max"}`);
    model.graph.initializer.push({
      name, dims: [], data_type: 1, raw_data: new Uint8Array(Float32Array.of(bound).buffer),
      float_data: [], int32_data: [], int64_data: [], double_data: [], uint64_data: [], string_data: [],
    });
    return name;
  })];
  dropAttributes(node, ["min", "max"]);
}

/** The model at opset 13 or later; models already there come back unchanged (a copy). */
export function upgradeToQdqOpset(source: OnnxModel): OnnxModel {
  const model = cloneOnnxModel(source);
  const from = defaultOpsetVersion(model);
  if (from >= MINIMUM_QDQ_OPSET) return model;
  const graph = model.graph;
  const names = new NameAllocator(graph);
  const nodes: OnnxNode[] = [];
  for (const node of graph.node) {
    if ((node.domain ?? "") !== "" && node.domain !== "ai.onnx") { nodes.push(node); continue; }
    if (UNSUPPORTED_BELOW_13.has(node.op_type)) {
      throw new Error(`cannot upgrade opset ${from} -> ${MINIMUM_QDQ_OPSET} for per-channel QDQ: ${node.op_type} changed meaning; convert the model to opset 13 first`);
    }
    switch (node.op_type) {
      case "Softmax": case "LogSoftmax": case "Hardmax": nodes.push(...softmaxAsFlattened(node, names)); continue;
      case "Dropout": dropAttributes(node, ["ratio", "is_test"]); break;
      case "BatchNormalization": dropAttributes(node, ["spatial", "is_test", "consumed_inputs"]); break;
      case "Squeeze": case "Unsqueeze": axesAsInput(node, model, names); break;
      case "Clip": clipBoundsAsInputs(node, model, names); break;
      default: break;
    }
    nodes.push(node);
  }
  graph.node = nodes;
  sortTopologically(graph);
  model.opset_import = model.opset_import.map((opset) =>
    (opset.domain ?? "") === "" || opset.domain === "ai.onnx" ? { ...opset, version: MINIMUM_QDQ_OPSET } : opset);
  // IR 7 is the first that may carry opset 13 (onnx/docs/Versioning.md).
  if ((model.ir_version ?? 0) < 7) model.ir_version = 7;
  return model;
}
