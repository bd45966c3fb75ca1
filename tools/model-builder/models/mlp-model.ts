import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
import { OnnxGraphBuilder } from "../onnx-graph-builder";
import { SeededRandom } from "../seeded-random";
import { fanInUniformWeights, heUniformWeights } from "../weight-init";

/** Layer widths of `mlp`, exported for the tests and benchmarks that feed it. */
export const MLP_FEATURES = { input: 1024, hidden: 4096, output: 1024 } as const;
const INPUT_FEATURES = MLP_FEATURES.input;
const HIDDEN_FEATURES = MLP_FEATURES.hidden;
const OUTPUT_FEATURES = MLP_FEATURES.output;

/**
 * `mlp`: a 2-layer FP32 perceptron (1024 -> 4096 ReLU -> 1024, 8.4 M weights) for the batching benchmarks. One row
 * is a matrix-vector product that reads every weight for little arithmetic; a batch reads them once for all its
 * rows. That is the regime where Triton's dynamic batching pays, as it does for real models on GPUs.
 */
export function buildMlpModel(seed: number): ExampleModel {
  const random = new SeededRandom(seed);
  const graph = new OnnxGraphBuilder("mlp");
  const input = graph.addInput("INPUT0", "FLOAT", ["N", INPUT_FEATURES]);

  const w1 = graph.addInitializer("fc1.weight", [INPUT_FEATURES, HIDDEN_FEATURES],
    heUniformWeights(random, INPUT_FEATURES, INPUT_FEATURES * HIDDEN_FEATURES));
  const b1 = graph.addInitializer("fc1.bias", [HIDDEN_FEATURES],
    fanInUniformWeights(random, INPUT_FEATURES, HIDDEN_FEATURES));
  const w2 = graph.addInitializer("fc2.weight", [HIDDEN_FEATURES, OUTPUT_FEATURES],
    fanInUniformWeights(random, HIDDEN_FEATURES, HIDDEN_FEATURES * OUTPUT_FEATURES));
  const b2 = graph.addInitializer("fc2.bias", [OUTPUT_FEATURES],
    fanInUniformWeights(random, HIDDEN_FEATURES, OUTPUT_FEATURES));

  graph.addNode({ opType: "MatMul", inputs: [input, w1], outputs: ["fc1.matmul"] });
  graph.addNode({ opType: "Add", inputs: ["fc1.matmul", b1], outputs: ["fc1"] });
  graph.addNode({ opType: "Relu", inputs: ["fc1"], outputs: ["fc1.relu"] });
  graph.addNode({ opType: "MatMul", inputs: ["fc1.relu", w2], outputs: ["fc2.matmul"] });
  graph.addNode({ opType: "Add", inputs: ["fc2.matmul", b2], outputs: ["OUTPUT0"] });
  graph.addOutput("OUTPUT0", "FLOAT", ["N", OUTPUT_FEATURES]);

  return exampleModel(
    {
      name: "mlp",
      runtime: { platform: "onnxruntime_onnx" },
      maxBatchSize: 64,
      inputs: [{ name: "INPUT0", dataType: "TYPE_FP32", dims: [INPUT_FEATURES] }],
      outputs: [{ name: "OUTPUT0", dataType: "TYPE_FP32", dims: [OUTPUT_FEATURES] }],
      dynamicBatching: { maxQueueDelayUs: 500 },
      instanceGroups: [{ count: 1, kind: "KIND_CPU" }],
    },
    { [ONNX_MODEL_FILE_NAME]: graph.toModelBytes() },
  );
}
