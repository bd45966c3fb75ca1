import { ONNX_ELEMENT_TYPE } from "../onnx-element-type";
import { OnnxGraphBuilder } from "../onnx-graph-builder";

/**
 * A stateful accumulator for Triton's implicit state (`sequence_batching.state`): `OUTPUT = STATE_OUT =
 * STATE_IN + INPUT`, INT32 of shape `[batch, 1]`. The server feeds STATE_IN from the previous request's STATE_OUT
 * of the same sequence, so OUTPUT is the running sum of the sequence's inputs.
 */
export function accumulatorOnnxModel(name = "accumulator"): Uint8Array {
  const int32 = ONNX_ELEMENT_TYPE.INT32;
  const shape = ["batch", 1];
  const graph = new OnnxGraphBuilder(name);
  const input = graph.addInput("INPUT", int32, shape);
  const state = graph.addInput("STATE_IN", int32, shape);
  graph.addNode({ opType: "Add", inputs: [state, input], outputs: ["SUM"] });
  graph.addNode({ opType: "Identity", inputs: ["SUM"], outputs: ["OUTPUT"] });
  graph.addNode({ opType: "Identity", inputs: ["SUM"], outputs: ["STATE_OUT"] });
  graph.addOutput("OUTPUT", int32, shape);
  graph.addOutput("STATE_OUT", int32, shape);
  return graph.toModelBytes();
}
