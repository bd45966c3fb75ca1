import { attribute } from "./graph-edit";
import { cloneOnnxModel, DATA_TYPE, type OnnxModel, type OnnxTensor, type OnnxValueInfo } from "./onnx-model";
import { floatTensor, floatValues } from "./tensor-data";

function widenTensor(tensor: OnnxTensor): OnnxTensor {
  return tensor.data_type === DATA_TYPE.FLOAT16 ? floatTensor(tensor.name, tensor.dims, floatValues(tensor)) : tensor;
}

function widenValueInfo(value: OnnxValueInfo): void {
  const tensorType = value.type?.tensor_type;
  if (tensorType?.elem_type === DATA_TYPE.FLOAT16) tensorType.elem_type = DATA_TYPE.FLOAT;
}

/**
 * Makes an FP16 model FP32 (the optimizer's starting point; e.g. the shared SqueezeNet is published in FP16 only):
 * FLOAT16 initializers, constants, casts and graph inputs/outputs become FLOAT. FP16 -> FP32 is exact, so the
 * FP32 model computes on the same weights.
 */
export function float16ToFloat32(source: OnnxModel): OnnxModel {
  const model = cloneOnnxModel(source);
  const graph = model.graph;
  graph.initializer = graph.initializer.map(widenTensor);
  for (const value of [...graph.input, ...graph.output, ...graph.value_info]) widenValueInfo(value);
  for (const node of graph.node) {
    const to = node.op_type === "Cast" ? attribute(node, "to") : undefined;
    if (to?.i === DATA_TYPE.FLOAT16) to.i = DATA_TYPE.FLOAT;
    const value = node.op_type === "Constant" ? attribute(node, "value") : undefined;
    if (value?.t !== undefined) value.t = widenTensor(value.t);
  }
  return model;
}

/** Whether a model has FLOAT16 graph inputs, outputs or initializers. */
export function hasFloat16(model: OnnxModel): boolean {
  const graph = model.graph;
  return graph.initializer.some((t) => t.data_type === DATA_TYPE.FLOAT16)
    || [...graph.input, ...graph.output].some((v) => v.type?.tensor_type?.elem_type === DATA_TYPE.FLOAT16);
}
