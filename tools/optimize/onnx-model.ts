import { loadOnnxSchema } from "../model-builder/index";

/**
 * The decoded `ModelProto` as the passes see it: protobufjs plain objects (snake_case, as in onnx.proto), every
 * repeated field present as an array, 64-bit integers as numbers. Fields outside the model builder's onnx.proto
 * subset (metadata_props, external data) are not kept: the optimizer writes self-contained files.
 */
export interface OnnxTensor {
  name: string;
  dims: number[];
  data_type: number;
  raw_data?: Uint8Array;
  float_data: number[];
  int32_data: number[];
  int64_data: number[];
  double_data: number[];
  uint64_data: number[];
  string_data: Uint8Array[];
}

export interface OnnxAttribute {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: OnnxTensor;
  floats: number[];
  ints: number[];
}

export interface OnnxNode {
  name?: string;
  op_type: string;
  domain?: string;
  input: string[];
  output: string[];
  attribute: OnnxAttribute[];
}

export type OnnxDimension = { dim_value?: number; dim_param?: string };

export interface OnnxValueInfo {
  name: string;
  type?: { tensor_type?: { elem_type?: number; shape?: { dim: OnnxDimension[] } } };
}

export interface OnnxGraph {
  name?: string;
  node: OnnxNode[];
  initializer: OnnxTensor[];
  input: OnnxValueInfo[];
  output: OnnxValueInfo[];
  value_info: OnnxValueInfo[];
}

export interface OnnxModel {
  ir_version?: number;
  producer_name?: string;
  producer_version?: string;
  opset_import: { domain?: string; version: number }[];
  graph: OnnxGraph;
}

/** ONNX `TensorProto.DataType` codes the passes use (from onnx.proto). */
export const DATA_TYPE = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, FLOAT16: 10, DOUBLE: 11 } as const;

/** `AttributeProto.AttributeType` codes. */
export const ATTRIBUTE_TYPE = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 } as const;

/** Decodes ONNX bytes. Throws on bytes that are not a ModelProto with a graph. */
export function decodeOnnxModel(bytes: Uint8Array): OnnxModel {
  const { ModelProto } = loadOnnxSchema();
  const decoded = ModelProto.decode(bytes);
  const model = ModelProto.toObject(decoded, { longs: Number, arrays: true }) as OnnxModel;
  if (model.graph === undefined) throw new Error("not an ONNX model: no graph");
  const graph = model.graph;
  // toObject leaves out empty repeated fields of nested messages only when `arrays` is off; keep them uniform.
  graph.value_info ??= [];
  return model;
}

/** Serializes a model as the bytes of a `model.onnx` file. */
export function encodeOnnxModel(model: OnnxModel): Buffer {
  const { ModelProto } = loadOnnxSchema();
  const message = ModelProto.fromObject(model);
  const bytes = ModelProto.encode(message).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A deep copy, so that a pass never changes the model it was given. */
export function cloneOnnxModel(model: OnnxModel): OnnxModel {
  return decodeOnnxModel(encodeOnnxModel(model));
}

/** The opset version of the default (`ai.onnx`) domain. */
export function defaultOpsetVersion(model: OnnxModel): number {
  const entry = model.opset_import.find((opset) => opset.domain === undefined || opset.domain === "" || opset.domain === "ai.onnx");
  return entry?.version ?? 1;
}
