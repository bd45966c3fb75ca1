import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
import { OnnxGraphBuilder } from "../onnx-graph-builder";
import { type ModelTensorConfig } from "../model-config-text";

const ELEMENT_COUNT = 16;

function int32Tensor(name: string): ModelTensorConfig {
  return { name, dataType: "TYPE_INT32", dims: [ELEMENT_COUNT] };
}

/**
 * Triton's example model `simple`: OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1 on INT32 [16],
 * batched up to 8. Clients written against Triton's quickstart run against it unchanged.
 */
export function buildSimpleModel(): ExampleModel {
  const graph = new OnnxGraphBuilder("simple");
  const shape = ["N", ELEMENT_COUNT];
  const input0 = graph.addInput("INPUT0", "INT32", shape);
  const input1 = graph.addInput("INPUT1", "INT32", shape);
  graph.addNode({ opType: "Add", inputs: [input0, input1], outputs: ["OUTPUT0"] });
  graph.addNode({ opType: "Sub", inputs: [input0, input1], outputs: ["OUTPUT1"] });
  graph.addOutput("OUTPUT0", "INT32", shape);
  graph.addOutput("OUTPUT1", "INT32", shape);
  return exampleModel(
    {
      name: "simple",
      runtime: { platform: "onnxruntime_onnx" },
      maxBatchSize: 8,
      inputs: [int32Tensor("INPUT0"), int32Tensor("INPUT1")],
      outputs: [int32Tensor("OUTPUT0"), int32Tensor("OUTPUT1")],
    },
    { [ONNX_MODEL_FILE_NAME]: graph.toModelBytes() },
  );
}
