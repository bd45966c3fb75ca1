import { inferElementTypes } from "./element-types";
import { consumersOf, floatAttribute, initializerMap, intAttr, intAttribute, isGraphOutput, makeNode, NameAllocator, sortTopologically } from "./graph-edit";
import { cloneOnnxModel, DATA_TYPE, defaultOpsetVersion, type OnnxGraph, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-model";
import { pruneUnusedInitializers } from "./prune-initializers";
import { computeScaleZeroPoint, quantizeBias, quantizeWeightsPerChannel, type QuantParams, type QuantType } from "./quant-math";
import { floatTensor, floatValues, int32Tensor, int8Tensor, uint8Tensor } from "./tensor-data";

/**
 * Static QDQ quantization, after ONNX Runtime's `quantize_static(quant_format=QDQ)` (onnxruntime/python/tools/
 * quantization/qdq_quantizer.py, base_quantizer.py, registry.py, operators/*.py): which operators get QDQ and how.
 *  - weighted (Conv, ConvTranspose, Gemm, MatMul): activation input, INT8 symmetric weights (per channel when asked),
 *    INT32 bias at input scale x weight scale, and the output;
 *  - removable activations (Relu, Clip): removed when their input is quantized and read by them only, the input
 *    taking the activation's range (`adjust_tensor_ranges` + `QDQRemovableActivation`): the clamp at the range's
 *    low end does what the activation did;
 *  - data movers (MaxPool, Reshape, Transpose, ...): input quantized, output with the same scale (`QDQDirect8BitOp`);
 *  - the other QLinear operators (Add, Mul, Concat, GlobalAveragePool, Softmax, Sigmoid, ...): all float inputs and
 *    outputs (`QDQOperatorBase`); Softmax outputs get the range [0, 1].
 * Everything else stays float, reading the dequantized values. Activations are per-tensor, asymmetric.
 */

export interface ActivationRange {
  readonly min: number;
  readonly max: number;
}

export interface QdqOptions {
  /** UINT8 (ONNX Runtime's default, the fast U8S8 path on x86) or INT8 activations. */
  readonly activationType: QuantType;
  /** Per-channel weights (one scale per output channel) instead of one per tensor. */
  readonly perChannel: boolean;
  /** Nodes (by name) to leave in float. */
  readonly nodesToExclude?: readonly string[];
}

const WEIGHTED_OPS = new Set(["Conv", "ConvTranspose", "Gemm", "MatMul"]);
const REMOVABLE_ACTIVATIONS = new Set(["Relu", "Clip"]);
const DATA_MOVERS = new Set(["MaxPool", "AveragePool", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Slice", "Resize"]);
const GENERIC_OPS = new Set(["Add", "Mul", "Concat", "GlobalAveragePool", "Softmax", "Sigmoid", "LeakyRelu", "ArgMax", "Split", "Where", "Gather"]);

/** Operators the quantizer gives QDQ (the union of the sets above, as ONNX Runtime's registry.py lists them). */
export const QUANTIZED_OP_TYPES: readonly string[] = [...WEIGHTED_OPS, ...REMOVABLE_ACTIVATIONS, ...DATA_MOVERS, ...GENERIC_OPS];

function isQuantizable(node: OnnxNode, opset: number): boolean {
  if ((node.domain ?? "") !== "") return false;
  // UINT8/INT8 MaxPool needs opset 12 (registry.py QDQMaxPool falls back to float below).
  if (node.op_type === "MaxPool" && (opset < 12 || node.output.length > 1)) return false;
  return QUANTIZED_OP_TYPES.includes(node.op_type);
}

/**
 * The activations calibration must measure: every FLOAT value, not an initializer, read or written by an operator
 * the quantizer handles.
 */
export function activationsToCalibrate(model: OnnxModel): string[] {
  const graph = model.graph;
  const types = inferElementTypes(graph);
  const initializers = initializerMap(graph);
  const opset = defaultOpsetVersion(model);
  const tensors = new Set<string>();
  for (const node of graph.node) {
    if (!isQuantizable(node, opset)) continue;
    for (const name of [...node.input, ...node.output]) {
      if (name !== "" && !initializers.has(name) && types.get(name) === DATA_TYPE.FLOAT) tensors.add(name);
    }
  }
  return [...tensors];
}

/** ONNX Runtime's `adjust_tensor_ranges`: a Relu/Clip input read by it only takes its output's range; Softmax gives [0, 1]. */
function adjustRanges(graph: OnnxGraph, ranges: ReadonlyMap<string, ActivationRange>): Map<string, ActivationRange> {
  const adjusted = new Map(ranges);
  const consumers = consumersOf(graph);
  for (const node of graph.node) {
    const [input, output] = [node.input[0] ?? "", node.output[0] ?? ""];
    if (REMOVABLE_ACTIVATIONS.has(node.op_type)) {
      const range = adjusted.get(output);
      if ((consumers.get(input) ?? []).length === 1 && adjusted.has(input) && range !== undefined) adjusted.set(input, range);
    } else if (node.op_type === "Softmax" && adjusted.has(output)) {
      adjusted.set(output, { min: 0, max: 1 });
    }
  }
  return adjusted;
}

interface WeightPlan { readonly axis: number | undefined }
interface BiasPlan { readonly input: string; readonly weight: string }

/** What the walk over the graph decided, before anything is rewritten. */
class QuantizationSchedule {
  readonly activations: string[] = [];
  readonly sameAs = new Map<string, string>();
  readonly weights = new Map<string, WeightPlan>();
  readonly biases = new Map<string, BiasPlan>();
  readonly alias = new Map<string, string>();
  readonly removed = new Set<OnnxNode>();

  has(name: string): boolean {
    return this.activations.includes(name) || this.sameAs.has(name);
  }

  addActivation(name: string): void {
    if (!this.has(name)) this.activations.push(name);
  }
}

/** Which axis of a weight holds the output channels, for each weighted operator. */
function weightAxis(node: OnnxNode, weight: OnnxTensor, perChannel: boolean): number | undefined {
  if (!perChannel) return undefined;
  switch (node.op_type) {
    case "Conv": return 0;
    case "ConvTranspose": return 1;
    case "Gemm": return intAttribute(node, "transB", 0) === 1 ? 0 : 1;
    default: return weight.dims.length - 1;
  }
}

function scheduleNodes(graph: OnnxGraph, opset: number, ranges: ReadonlyMap<string, ActivationRange>, options: QdqOptions): QuantizationSchedule {
  const schedule = new QuantizationSchedule();
  const types = inferElementTypes(graph);
  const initializers = initializerMap(graph);
  const consumers = consumersOf(graph);
  const excluded = new Set(options.nodesToExclude ?? []);
  const isActivation = (name: string): boolean => ranges.has(name) && !initializers.has(name) && types.get(name) === DATA_TYPE.FLOAT;
  const isFloatWeight = (name: string): boolean => initializers.get(name)?.data_type === DATA_TYPE.FLOAT;
  const resolve = (name: string): string => schedule.alias.get(name) ?? name;
  for (const node of graph.node) {
    node.input = node.input.map(resolve);
    if (!isQuantizable(node, opset) || excluded.has(node.name ?? "")) continue;
    const [input, output] = [node.input[0] ?? "", node.output[0] ?? ""];
    if (WEIGHTED_OPS.has(node.op_type)) {
      const weight = node.input[1] ?? "";
      if (!isActivation(input) || !(isFloatWeight(weight) || isActivation(weight))) continue;
      schedule.addActivation(input);
      if (isFloatWeight(weight)) schedule.weights.set(weight, { axis: weightAxis(node, initializers.get(weight)!, options.perChannel) });
      else schedule.addActivation(weight);
      const bias = node.input[2] ?? "";
      const biasAllowed = node.op_type !== "Gemm" || (floatAttribute(node, "beta", 1) === 1 && intAttribute(node, "transB", 0) === 1);
      if (bias !== "" && isFloatWeight(bias) && isFloatWeight(weight) && biasAllowed && initializers.get(bias)!.dims.length === 1) {
        schedule.biases.set(bias, { input, weight });
      }
      if (isActivation(output)) schedule.addActivation(output);
    } else if (REMOVABLE_ACTIVATIONS.has(node.op_type)) {
      if (!schedule.has(input)) continue;
      if ((consumers.get(input) ?? []).length === 1 && !isGraphOutput(graph, output) && !isGraphOutput(graph, input)) {
        schedule.alias.set(output, input);
        schedule.removed.add(node);
      } else if (isActivation(output)) {
        schedule.addActivation(output);
      }
    } else if (DATA_MOVERS.has(node.op_type)) {
      if (!isActivation(input) || !types.has(output)) continue;
      schedule.addActivation(input);
      if (!schedule.has(output)) schedule.sameAs.set(output, input);
    } else {
      const floatInputs = node.input.filter((name) => name !== "" && types.get(name) === DATA_TYPE.FLOAT);
      if (floatInputs.length === 0 || !floatInputs.every(isActivation)) continue;
      floatInputs.forEach((name) => schedule.addActivation(name));
      node.output.filter(isActivation).forEach((name) => schedule.addActivation(name));
    }
  }
  for (const output of graph.output) output.name = resolve(output.name);
  return schedule;
}

/** Adds the Q/DQ pair of an activation: every reader now reads the dequantized value (graph outputs keep their name). */
function insertActivationQdq(graph: OnnxGraph, name: string, params: QuantParams, type: QuantType, names: NameAllocator, added: OnnxNode[]): void {
  const scale = names.next(`${name}_scale`);
  const zeroPoint = names.next(`${name}_zero_point`);
  graph.initializer.push(
    floatTensor(scale, [], Float32Array.of(params.scale)),
    type === "uint8" ? uint8Tensor(zeroPoint, [], Uint8Array.of(params.zeroPoint)) : int8Tensor(zeroPoint, [], Int8Array.of(params.zeroPoint)),
  );
  const quantized = names.next(`${name}_QuantizeLinear_Output`);
  if (isGraphOutput(graph, name)) {
    const input = names.next(`${name}_QuantizeLinear_Input`);
    for (const node of graph.node) node.output = node.output.map((o) => (o === name ? input : o));
    for (const node of graph.node) node.input = node.input.map((i) => (i === name ? input : i));
    added.push(makeNode("QuantizeLinear", [input, scale, zeroPoint], [quantized], [], `${name}_QuantizeLinear`));
    added.push(makeNode("DequantizeLinear", [quantized, scale, zeroPoint], [name], [], `${name}_DequantizeLinear`));
    return;
  }
  const dequantized = names.next(`${name}_DequantizeLinear_Output`);
  for (const node of graph.node) node.input = node.input.map((i) => (i === name ? dequantized : i));
  added.push(makeNode("QuantizeLinear", [name, scale, zeroPoint], [quantized], [], `${name}_QuantizeLinear`));
  added.push(makeNode("DequantizeLinear", [quantized, scale, zeroPoint], [dequantized], [], `${name}_DequantizeLinear`));
}

/** Replaces a constant by its quantized form and a DequantizeLinear that every reader reads instead. */
function insertConstantDq(
  graph: OnnxGraph, name: string, quantized: OnnxTensor, scales: Float32Array, zeroPoint: OnnxTensor, axis: number | undefined,
  names: NameAllocator, added: OnnxNode[],
): void {
  const scale = names.next(`${name}_scale`);
  graph.initializer.push(quantized, zeroPoint, floatTensor(scale, axis === undefined ? [] : [scales.length], scales));
  const dequantized = names.next(`${name}_DequantizeLinear_Output`);
  for (const node of graph.node) node.input = node.input.map((i) => (i === name ? dequantized : i));
  added.push(makeNode("DequantizeLinear", [quantized.name, scale, zeroPoint.name], [dequantized], axis === undefined ? [] : [intAttr("axis", axis)], `${name}_DequantizeLinear`));
}

/**
 * The QDQ model for `ranges` (calibrated min/max of the activations {@link activationsToCalibrate} lists). The
 * model must be at opset 13 or later (per-channel DequantizeLinear); see upgradeToQdqOpset.
 */
export function quantizeQdq(source: OnnxModel, ranges: ReadonlyMap<string, ActivationRange>, options: QdqOptions): OnnxModel {
  const model = cloneOnnxModel(source);
  const opset = defaultOpsetVersion(model);
  if (opset < 13) throw new Error(`QDQ quantization needs opset 13 or later (per-channel DequantizeLinear); the model has ${opset}`);
  const graph = model.graph;
  const adjusted = adjustRanges(graph, ranges);
  const schedule = scheduleNodes(graph, opset, adjusted, options);
  graph.node = graph.node.filter((node) => !schedule.removed.has(node));
  const names = new NameAllocator(graph);
  const initializers = initializerMap(graph);
  const added: OnnxNode[] = [];

  const params = new Map<string, QuantParams>();
  for (const name of schedule.activations) {
    const range = adjusted.get(name)!;
    params.set(name, computeScaleZeroPoint(range.min, range.max, options.activationType, false));
  }
  for (const [output, input] of schedule.sameAs) params.set(output, params.get(input)!);

  const weightScales = new Map<string, Float32Array>();
  for (const [name, plan] of schedule.weights) {
    const tensor = initializers.get(name)!;
    const axis = plan.axis;
    const { quantized, scales } = axis === undefined
      ? quantizeWeightsPerChannel(floatValues(tensor), [1, tensor.dims.reduce((a, b) => a * b, 1)], 0)
      : quantizeWeightsPerChannel(floatValues(tensor), tensor.dims, axis);
    weightScales.set(name, scales);
    const zeroPoint = int8Tensor(names.next(`${name}_zero_point`), axis === undefined ? [] : [scales.length], new Int8Array(scales.length));
    insertConstantDq(graph, name, int8Tensor(names.next(`${name}_quantized`), tensor.dims, quantized), scales, zeroPoint, axis, names, added);
  }
  for (const [name, plan] of schedule.biases) {
    const tensor = initializers.get(name)!;
    const inputScale = params.get(plan.input)!.scale;
    const { quantized, scales } = quantizeBias(floatValues(tensor), inputScale, weightScales.get(plan.weight)!);
    const zeroPoint = int32Tensor(names.next(`${name}_zero_point`), [scales.length], new Int32Array(scales.length));
    insertConstantDq(graph, name, int32Tensor(names.next(`${name}_quantized`), tensor.dims, quantized), scales, zeroPoint, 0, names, added);
  }
  for (const [name, value] of params) insertActivationQdq(graph, name, value, options.activationType, names, added);

  graph.node.push(...added);
  graph.value_info = [];
  pruneUnusedInitializers(graph);
  sortTopologically(graph);
  return model;
}
