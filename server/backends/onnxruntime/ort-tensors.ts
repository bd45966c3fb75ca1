import { isUtf8 } from "node:buffer";
import type * as ort from "onnxruntime-node";
import { bytesElementStrings, joinBytesStrings } from "../../../protocol/tensor-bytes";
import type { BackendTensor, InputProblem, TensorSpec } from "../backend";

/** Protocol datatype <-> ONNX Runtime tensor type. BF16 has no ONNX Runtime JS type, so it is absent. */
const ORT_TYPE_BY_DATATYPE: Readonly<Record<string, ort.Tensor.Type>> = {
  BOOL: "bool", UINT8: "uint8", UINT16: "uint16", UINT32: "uint32", UINT64: "uint64",
  INT8: "int8", INT16: "int16", INT32: "int32", INT64: "int64",
  FP16: "float16", FP32: "float32", FP64: "float64", BYTES: "string",
};

const DATATYPE_BY_ORT_TYPE: ReadonlyMap<string, string> = new Map(
  Object.entries(ORT_TYPE_BY_DATATYPE).map(([datatype, ortType]) => [ortType, datatype]),
);

type TypedArrayConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView;

const VIEW_BY_ORT_TYPE: Readonly<Partial<Record<ort.Tensor.Type, TypedArrayConstructor>>> = {
  bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  uint32: Uint32Array, int32: Int32Array, uint64: BigUint64Array, int64: BigInt64Array,
  float16: Uint16Array, float32: Float32Array, float64: Float64Array,
};

export function ortTypeOf(datatype: string): ort.Tensor.Type | undefined {
  return ORT_TYPE_BY_DATATYPE[datatype];
}

export function datatypeOfOrtType(ortType: string): string | undefined {
  return DATATYPE_BY_ORT_TYPE.get(ortType);
}

/**
 * Wraps the core's bytes as an ONNX Runtime tensor without copying when the bytes are aligned for the element
 * type (the scheduler hands each input over in its own ArrayBuffer, so they are).
 */
export function toOrtTensor(ortModule: typeof ort, tensor: BackendTensor): ort.Tensor {
  const ortType = ortTypeOf(tensor.datatype);
  if (ortType === undefined) throw new Error(`datatype ${tensor.datatype} is not supported by the onnxruntime backend`);
  const dims = [...tensor.shape];
  if (ortType === "string") return new ortModule.Tensor("string", bytesElementStrings(tensor.data), dims);
  const View = VIEW_BY_ORT_TYPE[ortType];
  if (View === undefined) throw new Error(`no typed array for ONNX Runtime type ${ortType}`);
  const elementSize = (View as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  let bytes = tensor.data;
  if (bytes.byteOffset % elementSize !== 0) bytes = bytes.slice();
  const view = new View(bytes.buffer, bytes.byteOffset, bytes.byteLength / elementSize);
  return new ortModule.Tensor(ortType, view as ort.Tensor.DataTypeMap[typeof ortType], dims);
}

export function fromOrtTensor(value: ort.Tensor): BackendTensor {
  const datatype = datatypeOfOrtType(value.type);
  if (datatype === undefined) throw new Error(`output type ${value.type} is not supported by the onnxruntime backend`);
  const shape = value.dims.map(Number);
  if (value.type === "string") return { datatype, shape, data: joinBytesStrings(value.data as string[]) };
  const view = value.data as ArrayBufferView;
  return { datatype, shape, data: new Uint8Array(view.buffer, view.byteOffset, view.byteLength) };
}

/**
 * The BYTES elements ONNX Runtime's Node.js binding cannot carry: it takes string tensors as JS strings, writes
 * each out as UTF-8 and hands it on NUL-terminated (js/node/src/tensor_helper.cc: `Utf8Value()`, then
 * `FillStringTensor` with `c_str()`), so bytes that are not UTF-8 would arrive as U+FFFD and a NUL byte would cut
 * the element short. Such an element is refused rather than altered.
 */
export function ortInputProblem(tensor: BackendTensor): InputProblem | undefined {
  if (tensor.datatype !== "BYTES") return undefined;
  // Walks the length prefixes in place: a tensor may hold a million elements, too many for an array of offsets.
  const data = tensor.data;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0, offset = 0; offset + 4 <= data.byteLength; i++) {
    const end = offset + 4 + view.getUint32(offset, true);
    const element = data.subarray(offset + 4, end);
    offset = end;
    if (element.byteLength === 0) continue;
    if (element.includes(0)) {
      return { element: i, reason: "holds a NUL byte: ONNX Runtime's Node.js binding passes strings NUL-terminated, so the element would be cut short" };
    }
    if (!isUtf8(element)) {
      return { element: i, reason: "is not valid UTF-8: ONNX Runtime's Node.js binding passes strings as UTF-8 text, so these bytes cannot reach the model unaltered" };
    }
  }
  return undefined;
}


/** Reads a session's I/O metadata in the backend's vocabulary; symbolic dims become -1. */
export function describeSession(session: ort.InferenceSession): { inputs: TensorSpec[]; outputs: TensorSpec[] } {
  const describe = (metadata: readonly ort.InferenceSession.ValueMetadata[]): TensorSpec[] =>
    metadata.map((m) => {
      if (!m.isTensor) throw new Error(`model ${m.name} is not a tensor: only tensor inputs and outputs are supported`);
      const datatype = datatypeOfOrtType(m.type);
      if (datatype === undefined) throw new Error(`tensor '${m.name}' has type ${m.type}, which the onnxruntime backend cannot serve`);
      return { name: m.name, datatype, shape: m.shape.map((d) => (typeof d === "number" && d >= 0 ? d : -1)) };
    });
  return { inputs: describe(session.inputMetadata), outputs: describe(session.outputMetadata) };
}
