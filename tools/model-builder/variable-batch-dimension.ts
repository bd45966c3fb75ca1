import { loadOnnxSchema, type OnnxValueInfoMessage } from "./onnx-schema";

interface DecodedGraph {
  initializer: { name: string }[];
  input: OnnxValueInfoMessage[];
  output: OnnxValueInfoMessage[];
  value_info: OnnxValueInfoMessage[];
}

/**
 * An ONNX model whose graph inputs and outputs (not its weights) get a symbolic first dimension `dimParam`, so a
 * model exported for batch 1 (SqueezeNet's `[1,3,224,224]`) takes any batch and Triton's dynamic batcher can
 * batch it. Nodes and weights are kept as they are; the intermediate shape annotations (`value_info`), which
 * still say batch 1, are dropped and ONNX Runtime infers them again. Only for graphs whose every operator treats
 * the first dimension as the batch (convolutions, pooling, softmax over axis 1, ...).
 */
export function withVariableBatchDimension(model: Uint8Array, dimParam = "N"): Uint8Array {
  const { ModelProto } = loadOnnxSchema();
  const decoded = ModelProto.decode(model) as unknown as { graph: DecodedGraph };
  const graph = decoded.graph;
  const weights = new Set(graph.initializer.map((tensor) => tensor.name));
  const batched = [...graph.input.filter((value) => !weights.has(value.name)), ...graph.output];
  for (const value of batched) {
    const dims = value.type.tensor_type.shape.dim;
    if (dims.length === 0) throw new Error(`graph tensor '${value.name}' is a scalar: no batch dimension to make variable`);
    dims[0] = { dim_param: dimParam };
  }
  graph.value_info = [];
  return ModelProto.encode(decoded).finish();
}
