import * as ort from "onnxruntime-node";
import { OnnxGraphBuilder, SeededRandom } from "../../../tools/model-builder/index";
import { decodeOnnxModel, encodeOnnxModel, type OnnxModel } from "../../../tools/optimize/onnx-model";

/** Small models built with the model builder, for the graph passes' tests. */

export function randomValues(random: SeededRandom, count: number, low = -1, high = 1): Float32Array {
  return Float32Array.from({ length: count }, () => low + (high - low) * random.nextFloat());
}

/** X [1,2,6,6] -> Conv (4 filters 3x3, pad 1, bias) -> [BatchNormalization] -> Relu -> Y. */
export function convModel(options: { batchNorm: boolean; seed: number; weights?: Float32Array; bias?: Float32Array }): OnnxModel {
  const random = new SeededRandom(options.seed);
  const graph = new OnnxGraphBuilder("conv");
  graph.addInput("X", "FLOAT", [1, 2, 6, 6]);
  const w = graph.addInitializer("W", [4, 2, 3, 3], options.weights ?? randomValues(random, 72, -0.5, 0.5));
  const b = graph.addInitializer("B", [4], options.bias ?? randomValues(random, 4, -0.2, 0.2));
  graph.addNode({
    opType: "Conv", inputs: ["X", w, b], outputs: ["conv"],
    attributes: { kernel_shape: { kind: "INTS", value: [3, 3] }, pads: { kind: "INTS", value: [1, 1, 1, 1] } },
  });
  let last = "conv";
  if (options.batchNorm) {
    const parameter = (name: string, low: number, high: number): string => graph.addInitializer(name, [4], randomValues(random, 4, low, high));
    graph.addNode({
      opType: "BatchNormalization",
      inputs: ["conv", parameter("gamma", 0.5, 1.5), parameter("beta", -0.3, 0.3), parameter("mean", -0.2, 0.2), parameter("var", 0.5, 2)],
      outputs: ["bn"], attributes: { epsilon: { kind: "FLOAT", value: 1e-5 } },
    });
    last = "bn";
  }
  graph.addNode({ opType: "Relu", inputs: [last], outputs: ["Y"] });
  graph.addOutput("Y", "FLOAT", [1, 4, 6, 6]);
  return decodeOnnxModel(graph.toModelBytes({ opsetVersion: 13 }));
}

export async function runModel(model: OnnxModel, feeds: Record<string, ort.Tensor>): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(encodeOnnxModel(model));
  try {
    return await session.run(feeds);
  } finally {
    await session.release();
  }
}

export async function runSingle(model: OnnxModel, name: string, values: Float32Array, dims: readonly number[]): Promise<Float32Array> {
  const outputs = await runModel(model, { [name]: new ort.Tensor("float32", values, [...dims]) });
  return Object.values(outputs)[0]!.data as Float32Array;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}
