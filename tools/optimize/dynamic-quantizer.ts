import { floatAttribute, initializerMap, intAttr, intAttribute, makeNode, NameAllocator, sortTopologically } from "./graph-edit";
import { cloneOnnxModel, DATA_TYPE, type OnnxModel, type OnnxNode } from "./onnx-model";
import { pruneUnusedInitializers } from "./prune-initializers";
import { quantizeWeightsPerTensor } from "./quant-math";
import { floatTensor, floatValues, int8Tensor } from "./tensor-data";

/**
 * Dynamic quantization of MatMul (and of Gemm, as MatMul + Add) with a constant 2-D weight, after ONNX Runtime's
 * `quantize_dynamic` (onnxruntime/python/tools/quantization/operators/matmul.py `MatMulInteger`): the weight is
 * stored symmetric INT8 per tensor; at run time DynamicQuantizeLinear quantizes the activation to UINT8 with the
 * range of each request, MatMulInteger multiplies in integers, and the INT32 result is scaled back to float by
 * activation scale x weight scale. No calibration data is needed.
 */
export function quantizeDynamic(source: OnnxModel): OnnxModel {
  const model = cloneOnnxModel(source);
  const graph = model.graph;
  const initializers = initializerMap(graph);
  const names = new NameAllocator(graph);
  const nodes: OnnxNode[] = [];
  for (const node of graph.node) {
    const weight = initializers.get(node.input[1] ?? "");
    const isGemm = node.op_type === "Gemm";
    const eligible = (node.op_type === "MatMul" || (isGemm && intAttribute(node, "transA", 0) === 0 && floatAttribute(node, "alpha", 1) === 1
      && floatAttribute(node, "beta", 1) === 1)) && weight?.data_type === DATA_TYPE.FLOAT && weight.dims.length === 2 && (node.domain ?? "") === "";
    if (!eligible) { nodes.push(node); continue; }
    const output = node.output[0]!;
    let values = floatValues(weight);
    let dims = weight.dims;
    if (isGemm && intAttribute(node, "transB", 0) === 1) {
      // MatMulInteger has no transpose: store B transposed.
      const [rows, cols] = dims as [number, number];
      const transposed = new Float32Array(values.length);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) transposed[c * rows + r] = values[r * cols + c]!;
      values = transposed;
      dims = [cols, rows];
    }
    const { quantized, scales } = quantizeWeightsPerTensor(values);
    const base = names.next(`${weight.name}_dynamic`);
    const [wq, ws, wzp] = [`${base}_quantized`, `${base}_scale`, `${base}_zero_point`];
    graph.initializer.push(int8Tensor(wq, dims, quantized), floatTensor(ws, [], scales), int8Tensor(wzp, [], Int8Array.of(0)));
    const input = node.input[0]!;
    const [aq, as, azp] = [names.next(`${input}_quantized`), names.next(`${input}_scale`), names.next(`${input}_zero_point`)];
    const [product, asFloat, scale] = [names.next(`${output}_int32`), names.next(`${output}_float`), names.next(`${output}_scale`)];
    const hasBias = isGemm && (node.input[2] ?? "") !== "";
    const scaled = hasBias ? names.next(`${output}_no_bias`) : output;
    nodes.push(
      makeNode("DynamicQuantizeLinear", [input], [aq, as, azp], [], names.next(`${output}_DynamicQuantizeLinear`)),
      makeNode("MatMulInteger", [aq, wq, azp, wzp], [product], [], names.next(`${output}_MatMulInteger`)),
      makeNode("Cast", [product], [asFloat], [intAttr("to", DATA_TYPE.FLOAT)]),
      makeNode("Mul", [as, ws], [scale]),
      makeNode("Mul", [asFloat, scale], [scaled], [], node.name),
    );
    if (hasBias) nodes.push(makeNode("Add", [scaled, node.input[2]!], [output]));
  }
  graph.node = nodes;
  graph.value_info = [];
  pruneUnusedInitializers(graph);
  sortTopologically(graph);
  return model;
}
