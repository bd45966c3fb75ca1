import { DATA_TYPE, type OnnxModel, type OnnxValueInfo } from "./onnx-model";

/** Triton `data_type` of the ONNX element types a variant's inputs and outputs can have. */
const TRITON_TYPE: Readonly<Record<number, string>> = {
  [DATA_TYPE.FLOAT]: "TYPE_FP32", [DATA_TYPE.FLOAT16]: "TYPE_FP16", [DATA_TYPE.DOUBLE]: "TYPE_FP64",
  [DATA_TYPE.UINT8]: "TYPE_UINT8", [DATA_TYPE.INT8]: "TYPE_INT8", [DATA_TYPE.INT32]: "TYPE_INT32", [DATA_TYPE.INT64]: "TYPE_INT64",
  9: "TYPE_BOOL", 8: "TYPE_STRING",
};

export function tritonDataType(elemType: number): string {
  const type = TRITON_TYPE[elemType];
  if (type === undefined) throw new Error(`ONNX element type ${elemType} has no Triton data type here`);
  return type;
}

/** The `{ ... }` block around `offset`: from its opening brace to just past its closing one. */
function enclosingBlock(text: string, offset: number): { start: number; end: number } | undefined {
  let depth = 0;
  let start = -1;
  for (let i = offset; i >= 0; i--) {
    if (text[i] === "}") depth++;
    else if (text[i] === "{") { if (depth === 0) { start = i; break; } depth--; }
  }
  if (start < 0) return undefined;
  depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return { start, end: i + 1 };
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The source config.pbtxt with the variant's name and the data types its inputs and outputs now have; everything
 * else (batching, instance groups, labels, comments) stays as the user wrote it.
 */
export function editModelConfig(configText: string, name: string, model: OnnxModel): string {
  let text = configText.replace(/^(\s*name\s*:\s*)"[^"]*"/m, `$1${JSON.stringify(name)}`);
  if (!/^\s*name\s*:/m.test(text)) text = `name: ${JSON.stringify(name)}\n${text}`;
  for (const value of [...model.graph.input, ...model.graph.output]) {
    const elemType = value.type?.tensor_type?.elem_type;
    if (elemType === undefined) continue;
    const match = new RegExp(`name\\s*:\\s*"${escapeRegExp(value.name)}"`).exec(text);
    if (match === null) continue;
    const block = enclosingBlock(text, match.index);
    if (block === undefined) continue;
    const body = text.slice(block.start, block.end).replace(/data_type\s*:\s*TYPE_\w+/, `data_type: ${tritonDataType(elemType)}`);
    text = text.slice(0, block.start) + body + text.slice(block.end);
  }
  return text;
}

function dimsOf(value: OnnxValueInfo): number[] {
  return (value.type?.tensor_type?.shape?.dim ?? []).map((dim) => (dim.dim_value !== undefined && dim.dim_value > 0 ? dim.dim_value : -1));
}

/**
 * A config.pbtxt for a bare model file: `onnxruntime_onnx`, no Triton batching (`max_batch_size: 0`, the model's
 * full shapes, -1 where a dimension is symbolic), one CPU instance.
 */
export function modelConfigFor(name: string, model: OnnxModel): string {
  const initializers = new Set(model.graph.initializer.map((t) => t.name));
  const tensor = (value: OnnxValueInfo): string[] => [
    "  {",
    `    name: ${JSON.stringify(value.name)}`,
    `    data_type: ${tritonDataType(value.type?.tensor_type?.elem_type ?? DATA_TYPE.FLOAT)}`,
    `    dims: [ ${dimsOf(value).join(", ")} ]`,
    "  }",
  ];
  const list = (field: string, values: OnnxValueInfo[]): string[] =>
    [`${field} [`, ...values.flatMap((v, i) => { const lines = tensor(v); if (i < values.length - 1) lines[lines.length - 1] = "  },"; return lines; }), "]"];
  return [
    `name: ${JSON.stringify(name)}`,
    'platform: "onnxruntime_onnx"',
    "max_batch_size: 0",
    ...list("input", model.graph.input.filter((v) => !initializers.has(v.name))),
    ...list("output", model.graph.output),
    "instance_group [ { count: 1, kind: KIND_CPU } ]",
    "",
  ].join("\n");
}

/**
 * The configuration for the T4 pools: the same model on a GPU instance with ONNX Runtime's TensorRT execution
 * provider, as Triton's onnxruntime backend reads it (`optimization.execution_accelerators`,
 * `precision_mode` FP16 or INT8). An INT8 QDQ model carries its own scales, so TensorRT quantizes explicitly
 * from them and needs no calibration table. Written as `configs/t4.pbtxt`, which Triton selects with
 * `--model-config-name=t4`.
 */
export function gpuAlternativeConfig(configText: string, precision: "FP16" | "INT8"): string {
  const cpuFree = configText.replace(/instance_group\s*\[[\s\S]*?\]\s*\n?/m, "").replace(/optimization\s*\{[\s\S]*?\n\}\s*\n?/m, "");
  return `${cpuFree.trimEnd()}
instance_group [ { count: 1, kind: KIND_GPU } ]
optimization {
  execution_accelerators {
    gpu_execution_accelerator : [ {
      name : "tensorrt"
      parameters { key: "precision_mode" value: "${precision}" }
      parameters { key: "max_workspace_size_bytes" value: "1073741824" }
      parameters { key: "trt_engine_cache_enable" value: "true" }
    } ]
  }
}
`;
}
