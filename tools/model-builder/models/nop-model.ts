import { type DataType } from "../../../protocol/datatypes";
import { ONNX_ELEMENT_TYPE } from "../onnx-element-type";
import { OnnxGraphBuilder } from "../onnx-graph-builder";

/**
 * The ONNX file of one of Triton's QA "nop" models (its `gen_qa_*` scripts): `INPUT<i>` is passed to
 * `OUTPUT<i>` unchanged for each of `tensorCount` pairs, every dimension symbolic, so that one file serves any
 * config: batching or not, any dims, a `reshape` of any rank. `rank` counts every dimension the model itself
 * sees (the batch dimension included).
 */
export function nopOnnxModel(name: string, dataType: DataType, rank: number, tensorCount = 1): Uint8Array {
  const elementType = ONNX_ELEMENT_TYPE[dataType];
  const graph = new OnnxGraphBuilder(name);
  for (let i = 0; i < tensorCount; i++) {
    const shape = Array.from({ length: rank }, (_, d) => `d${i}_${d}`);
    const input = graph.addInput(`INPUT${i}`, elementType, shape);
    graph.addNode({ opType: "Identity", inputs: [input], outputs: [`OUTPUT${i}`] });
    graph.addOutput(`OUTPUT${i}`, elementType, shape);
  }
  return graph.toModelBytes();
}
