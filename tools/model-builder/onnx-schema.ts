import fs from "node:fs";
import path from "node:path";
import protobuf from "protobufjs";
import { findPackageRoot } from "../../common/find-package-root";

/** A tensor dimension as written: a fixed size, or a symbolic name (`dim_param`) such as a batch dimension. */
export type OnnxDimensionMessage = { dim_value: number } | { dim_param: string };

export interface OnnxValueInfoMessage {
  name: string;
  type: { tensor_type: { elem_type: number; shape: { dim: OnnxDimensionMessage[] } } };
}

export interface OnnxTensorMessage {
  name: string;
  dims: number[];
  data_type: number;
  raw_data: Uint8Array;
}

export interface OnnxAttributeMessage {
  name: string;
  type: number;
  f?: number;
  i?: number;
  floats?: number[];
  ints?: number[];
}

export interface OnnxNodeMessage {
  name: string;
  op_type: string;
  input: string[];
  output: string[];
  attribute: OnnxAttributeMessage[];
}

/** The plain-object shape of the `ModelProto` subset that the graph builder writes (snake_case, as in ONNX). */
export interface OnnxModelMessage {
  ir_version: number;
  producer_name: string;
  producer_version: string;
  opset_import: { domain: string; version: number }[];
  graph: {
    name: string;
    node: OnnxNodeMessage[];
    initializer: OnnxTensorMessage[];
    input: OnnxValueInfoMessage[];
    output: OnnxValueInfoMessage[];
  };
}

/** The protobufjs view of our ONNX subset (`onnx.proto`). */
export interface OnnxSchema {
  readonly ModelProto: protobuf.Type;
  /** `TensorProto.DataType`: element type name (`FLOAT`, `INT64`, ...) -> the code stored in `elem_type`. */
  readonly elementTypeCodes: Readonly<Record<string, number>>;
  /** `AttributeProto.AttributeType`: attribute kind (`INT`, `INTS`, `FLOAT`, ...) -> the code stored in `type`. */
  readonly attributeTypeCodes: Readonly<Record<string, number>>;
}

const PROTO_FILE_NAME = "onnx.proto";

// tsc does not copy .proto files into dist/, so the compiled module falls back to the source copy.
function onnxProtoPath(): string {
  const besideModule = path.join(__dirname, PROTO_FILE_NAME);
  if (fs.existsSync(besideModule)) return besideModule;
  return path.join(findPackageRoot(__dirname), "tools", "model-builder", PROTO_FILE_NAME);
}

let cachedSchema: OnnxSchema | undefined;

/** Parses `onnx.proto` on first use and returns the same types afterwards. Throws if the file is missing. */
export function loadOnnxSchema(): OnnxSchema {
  if (cachedSchema === undefined) {
    const root = new protobuf.Root().loadSync(onnxProtoPath(), { keepCase: true });
    cachedSchema = {
      ModelProto: root.lookupType("onnx.ModelProto"),
      elementTypeCodes: root.lookupEnum("onnx.TensorProto.DataType").values,
      attributeTypeCodes: root.lookupEnum("onnx.AttributeProto.AttributeType").values,
    };
  }
  return cachedSchema;
}
