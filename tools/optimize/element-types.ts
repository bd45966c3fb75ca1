import { attribute } from "./graph-edit";
import { DATA_TYPE, type OnnxGraph, type OnnxNode } from "./onnx-model";

const BOOL = 9;
/** Operators whose outputs are INT64 whatever their inputs (indices, shapes, counts). */
const INT64_OUTPUT_OPS = new Set(["Shape", "Size", "ArgMax", "ArgMin", "NonZero", "NonMaxSuppression"]);
const BOOL_OUTPUT_OPS = new Set(["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf"]);

function outputTypes(node: OnnxNode, types: ReadonlyMap<string, number>): (number | undefined)[] {
  const first = (index: number): number | undefined => types.get(node.input[index] ?? "");
  switch (node.op_type) {
    case "Cast": return [attribute(node, "to")?.i];
    case "Constant": return [attribute(node, "value")?.t?.data_type ?? DATA_TYPE.FLOAT];
    case "ConstantOfShape": return [attribute(node, "value")?.t?.data_type ?? DATA_TYPE.FLOAT];
    case "DequantizeLinear": return [DATA_TYPE.FLOAT];
    case "QuantizeLinear": return [first(2) ?? DATA_TYPE.UINT8];
    case "TopK": return [first(0), DATA_TYPE.INT64];
    case "Where": return [first(1)];
    case "Dropout": return [first(0), BOOL];
    case "MaxPool": return [first(0), DATA_TYPE.INT64];
    default:
      if (INT64_OUTPUT_OPS.has(node.op_type)) return node.output.map(() => DATA_TYPE.INT64);
      if (BOOL_OUTPUT_OPS.has(node.op_type)) return node.output.map(() => BOOL);
      // Elementwise, convolution, pooling, shape-moving operators: the type of their data input.
      return node.output.map(() => first(0));
  }
}

/**
 * The element type of every value, propagated through the graph from its inputs and initializers: enough type
 * inference for the passes, which only ask "is this value FLOAT?". Values of unknown type are left out.
 */
export function inferElementTypes(graph: OnnxGraph): Map<string, number> {
  const types = new Map<string, number>();
  for (const value of [...graph.input, ...graph.value_info]) {
    const elemType = value.type?.tensor_type?.elem_type;
    if (elemType !== undefined) types.set(value.name, elemType);
  }
  for (const tensor of graph.initializer) types.set(tensor.name, tensor.data_type);
  for (const node of graph.node) {
    outputTypes(node, types).forEach((type, index) => {
      const name = node.output[index];
      if (name !== undefined && name !== "" && type !== undefined) types.set(name, type);
    });
  }
  return types;
}
