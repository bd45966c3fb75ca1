import { attribute, consumersOf, intAttr, makeNode, NameAllocator, sortTopologically } from "./graph-edit";
import { inferElementTypes } from "./element-types";
import { cloneOnnxModel, DATA_TYPE, type OnnxModel, type OnnxNode, type OnnxTensor } from "./onnx-model";
import { float16Tensor, floatValues } from "./tensor-data";

/**
 * Operators kept in FP32: onnxconverter-common's `DEFAULT_OP_BLOCK_LIST` (onnxconverter_common/float16.py), which
 * ONNX Runtime's transformers converter (onnxruntime/python/tools/transformers/float16.py) also uses: ML operators,
 * and ones whose FP16 versions are missing or lose too much (TopK, Range, CumSum, Min, Max, Resize, Upsample, ...).
 */
export const DEFAULT_FP16_OP_BLOCK_LIST: readonly string[] = [
  "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer", "Imputer",
  "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder", "RandomUniformLike",
  "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap",
  "NonMaxSuppression", "TopK", "RoiAlign", "Resize", "Range", "CumSum", "Min", "Max", "Upsample",
];

/** Inputs that must stay FLOAT even in FP16 nodes (transformers/float16.py `ALWAYS_FLOAT_INPUTS`). */
const ALWAYS_FLOAT_INPUTS: Readonly<Record<string, readonly number[]>> = { Resize: [2], GroupNorm: [1, 2], SkipGroupNorm: [1, 2] };

export interface Float16Options {
  /** Keep FLOAT graph inputs and outputs, with Casts at the edges (`keep_io_types`); otherwise they become FLOAT16. */
  readonly keepIoTypes: boolean;
  /** Operators to keep in FP32 (default {@link DEFAULT_FP16_OP_BLOCK_LIST}). */
  readonly opBlockList?: readonly string[];
}

function castNode(input: string, output: string, to: number): OnnxNode {
  return makeNode("Cast", [input], [output], [intAttr("to", to)]);
}

function isFloatInputKept(node: OnnxNode, index: number, blocked: ReadonlySet<string>): boolean {
  return blocked.has(node.op_type) || (ALWAYS_FLOAT_INPUTS[node.op_type]?.includes(index) ?? false);
}

/**
 * Converts a FP32 model to FP16: FLOAT initializers and constants to FLOAT16 (rounded to nearest, ties to even),
 * Casts to FLOAT into Casts to FLOAT16, every FLOAT value computed in FP16; blocked operators get a Cast to FLOAT on
 * each FP16 input and a Cast back to FLOAT16 on each output. Value types recorded in `value_info` are dropped: ONNX
 * Runtime infers them again at load.
 */
export function float32ToFloat16(source: OnnxModel, options: Float16Options): OnnxModel {
  const model = cloneOnnxModel(source);
  const graph = model.graph;
  const blocked = new Set(options.opBlockList ?? DEFAULT_FP16_OP_BLOCK_LIST);
  const types = inferElementTypes(graph);
  const names = new NameAllocator(graph);
  const consumers = consumersOf(graph);
  const isFloat = (name: string): boolean => types.get(name) === DATA_TYPE.FLOAT;
  const added: OnnxNode[] = [];

  // Initializers only kept-FLOAT inputs read stay FLOAT; all others become FLOAT16.
  const floatOnlyUses = (name: string): boolean => (consumers.get(name) ?? []).every((node) =>
    node.input.every((input, index) => input !== name || isFloatInputKept(node, index, blocked)));
  const stillFloat = new Set<string>();
  graph.initializer = graph.initializer.map((tensor): OnnxTensor => {
    if (tensor.data_type !== DATA_TYPE.FLOAT) return tensor;
    if (floatOnlyUses(tensor.name)) { stillFloat.add(tensor.name); return tensor; }
    return float16Tensor(tensor.name, tensor.dims, floatValues(tensor));
  });

  // Graph inputs: FLOAT16, or kept FLOAT with a Cast to FLOAT16 that every consumer reads instead.
  const renamedInputs = new Map<string, string>();
  for (const input of graph.input) {
    const tensorType = input.type?.tensor_type;
    if (tensorType?.elem_type !== DATA_TYPE.FLOAT || stillFloat.has(input.name) || graph.initializer.some((t) => t.name === input.name)) continue;
    if (options.keepIoTypes) {
      const cast = names.next(`${input.name}_fp16`);
      added.push(castNode(input.name, cast, DATA_TYPE.FLOAT16));
      renamedInputs.set(input.name, cast);
    } else {
      tensorType.elem_type = DATA_TYPE.FLOAT16;
    }
  }
  for (const node of graph.node) node.input = node.input.map((name) => renamedInputs.get(name) ?? name);

  const toFloatCasts = new Map<string, string>();
  for (const node of graph.node) {
    if (node.op_type === "Cast") {
      const to = attribute(node, "to");
      if (to?.i === DATA_TYPE.FLOAT && !blocked.has("Cast")) to.i = DATA_TYPE.FLOAT16;
    }
    if (node.op_type === "Constant" || node.op_type === "ConstantOfShape") {
      const value = attribute(node, "value");
      if (value?.t?.data_type === DATA_TYPE.FLOAT) value.t = float16Tensor(value.t.name, value.t.dims, floatValues(value.t));
    }
    // FP32 islands: FP16 inputs are cast up, FLOAT outputs are cast back down under their original names.
    node.input = node.input.map((name, index) => {
      if (!isFloatInputKept(node, index, blocked) || stillFloat.has(name)) return name;
      const original = [...renamedInputs.entries()].find(([, cast]) => cast === name)?.[0] ?? name;
      if (!isFloat(original)) return name;
      let cast = toFloatCasts.get(name);
      if (cast === undefined) {
        cast = names.next(`${name}_fp32`);
        toFloatCasts.set(name, cast);
        added.push(castNode(name, cast, DATA_TYPE.FLOAT));
      }
      return cast;
    });
    if (blocked.has(node.op_type)) {
      node.output = node.output.map((name) => {
        if (!isFloat(name)) return name;
        const raw = names.next(`${name}_fp32`);
        added.push(castNode(raw, name, DATA_TYPE.FLOAT16));
        return raw;
      });
    }
  }

  // Graph outputs: FLOAT16, or kept FLOAT with the producer renamed and a Cast to FLOAT under the output's name.
  for (const output of graph.output) {
    const tensorType = output.type?.tensor_type;
    if (tensorType?.elem_type !== DATA_TYPE.FLOAT) continue;
    if (!options.keepIoTypes) { tensorType.elem_type = DATA_TYPE.FLOAT16; continue; }
    const half = names.next(`${output.name}_fp16`);
    for (const node of [...graph.node, ...added]) {
      node.output = node.output.map((name) => (name === output.name ? half : name));
      if (!(node.op_type === "Cast" && node.output[0] === output.name)) node.input = node.input.map((name) => (name === output.name ? half : name));
    }
    added.push(castNode(half, output.name, DATA_TYPE.FLOAT));
  }

  graph.node.push(...added);
  graph.value_info = [];
  sortTopologically(graph);
  return model;
}
