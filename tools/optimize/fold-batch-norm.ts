import { consumersOf, floatAttribute, initializerMap, isGraphOutput, NameAllocator, producersOf } from "./graph-edit";
import { cloneOnnxModel, type OnnxModel } from "./onnx-model";
import { pruneUnusedInitializers } from "./prune-initializers";
import { floatTensor, floatValues } from "./tensor-data";

/**
 * Folds each inference-mode BatchNormalization that directly follows a Conv into the Conv's weights and bias:
 * W' = W * g / sqrt(v + eps) per output channel, B' = (B - m) * g / sqrt(v + eps) + b. ONNX Runtime does the same at
 * session start (ConvBNFusion) and `quant_pre_process` before quantizing; folding first means the weights that get
 * quantized are the ones the integer kernel will use, and no float BN sits between two quantized convolutions.
 */
export function foldBatchNormIntoConv(source: OnnxModel): OnnxModel {
  const model = cloneOnnxModel(source);
  const graph = model.graph;
  const consumers = consumersOf(graph);
  const producers = producersOf(graph);
  const initializers = initializerMap(graph);
  const names = new NameAllocator(graph);
  const removed = new Set<object>();
  for (const bn of graph.node) {
    if (bn.op_type !== "BatchNormalization" || bn.output.length !== 1) continue;
    const conv = producers.get(bn.input[0] ?? "");
    if (conv?.op_type !== "Conv" || removed.has(conv)) continue;
    const convOutput = conv.output[0]!;
    if ((consumers.get(convOutput) ?? []).length !== 1 || isGraphOutput(graph, convOutput)) continue;
    const weight = initializers.get(conv.input[1] ?? "");
    const bias = conv.input[2] === undefined || conv.input[2] === "" ? undefined : initializers.get(conv.input[2]);
    const params = bn.input.slice(1).map((name) => initializers.get(name));
    if (weight === undefined || (conv.input[2] && bias === undefined) || params.some((p) => p === undefined)) continue;
    const [gamma, beta, mean, variance] = params.map((p) => floatValues(p!)) as [Float32Array, Float32Array, Float32Array, Float32Array];
    const epsilon = floatAttribute(bn, "epsilon", 1e-5);
    const channels = weight.dims[0]!;
    const w = floatValues(weight);
    const b = bias === undefined ? new Float32Array(channels) : floatValues(bias);
    const perChannel = w.length / channels;
    const foldedW = new Float32Array(w.length);
    const foldedB = new Float32Array(channels);
    for (let c = 0; c < channels; c++) {
      const factor = gamma[c]! / Math.sqrt(variance[c]! + epsilon);
      for (let i = 0; i < perChannel; i++) foldedW[c * perChannel + i] = w[c * perChannel + i]! * factor;
      foldedB[c] = (b[c]! - mean[c]!) * factor + beta[c]!;
    }
    const wName = names.next(`${weight.name}_bn_folded`);
    const bName = names.next(`${conv.name ?? convOutput}_bias_bn_folded`);
    graph.initializer.push(floatTensor(wName, weight.dims, foldedW), floatTensor(bName, [channels], foldedB));
    conv.input = [conv.input[0]!, wName, bName];
    conv.output = [bn.output[0]!];
    removed.add(bn);
  }
  graph.node = graph.node.filter((node) => !removed.has(node));
  pruneUnusedInitializers(graph);
  return model;
}
