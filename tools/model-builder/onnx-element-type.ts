import { type DataType } from "../../protocol/datatypes";

/** ONNX tensor element type names, as in `TensorProto.DataType` of `onnx.proto` (the codes come from there). */
export type OnnxElementType =
  | "FLOAT" | "UINT8" | "INT8" | "UINT16" | "INT16" | "INT32" | "INT64" | "STRING" | "BOOL"
  | "FLOAT16" | "DOUBLE" | "UINT32" | "UINT64" | "BFLOAT16";

/** The ONNX element type that carries each KServe/Triton datatype (`BYTES` is ONNX `STRING`). */
export const ONNX_ELEMENT_TYPE: Readonly<Record<DataType, OnnxElementType>> = {
  BOOL: "BOOL", UINT8: "UINT8", UINT16: "UINT16", UINT32: "UINT32", UINT64: "UINT64",
  INT8: "INT8", INT16: "INT16", INT32: "INT32", INT64: "INT64",
  FP16: "FLOAT16", FP32: "FLOAT", FP64: "DOUBLE", BYTES: "STRING", BF16: "BFLOAT16",
};
