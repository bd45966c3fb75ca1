import { type DataType, dataTypeFromConfig, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { invalidArg } from "../errors";
import type { ParameterValue } from "../request/inference-request";
import type { ModelConfig, SequenceControlKind } from "../model-config/model-config";
import { joinBytesElements, type Tensor } from "../request/tensor";

type ControlKind = "START" | "END" | "READY" | "CORRID";

/** A control input the server fills for sequence models (Triton's sequence_batching.control_input). */
export interface ControlInputSpec {
  readonly name: string;
  readonly datatype: DataType;
  readonly kind: ControlKind;
  /** For START/END/READY: the false and true values. */
  readonly falseTrue: readonly [number | boolean, number | boolean];
}

const KIND_BY_CONFIG: Readonly<Record<SequenceControlKind, ControlKind>> = {
  CONTROL_SEQUENCE_START: "START", CONTROL_SEQUENCE_END: "END", CONTROL_SEQUENCE_READY: "READY", CONTROL_SEQUENCE_CORRID: "CORRID",
};

/** The control inputs of a config that validateSequenceControls (model-config/validate-sequence-controls.ts) passed. */
export function controlInputsOf(config: ModelConfig): ControlInputSpec[] {
  const specs: ControlInputSpec[] = [];
  for (const input of config.sequence_batching?.control_input ?? []) {
    for (const control of input.control) {
      const kind = KIND_BY_CONFIG[control.kind];
      if (kind === "CORRID") {
        specs.push({ name: input.name, datatype: dataTypeFromConfig(control.data_type)!, kind, falseTrue: [0, 0] });
      } else if (control.int32_false_true.length === 2) {
        specs.push({ name: input.name, datatype: "INT32", kind, falseTrue: [control.int32_false_true[0]!, control.int32_false_true[1]!] });
      } else if (control.fp32_false_true.length === 2) {
        specs.push({ name: input.name, datatype: "FP32", kind, falseTrue: [control.fp32_false_true[0]!, control.fp32_false_true[1]!] });
      } else {
        specs.push({ name: input.name, datatype: "BOOL", kind, falseTrue: [control.bool_false_true[0]!, control.bool_false_true[1]!] });
      }
    }
  }
  return specs;
}

/**
 * A correlation ID as Triton holds one (InferenceRequest::SequenceId): an unsigned 64-bit integer or a string;
 * 0 and "" mean none. Sequences with the same digits as a number and as a string are different sequences.
 */
type CorrelationId = bigint | string;

function correlationIdOf(modelName: string, value: ParameterValue | undefined): CorrelationId | undefined {
  if (value === undefined || value === "" || value === 0 || value === 0n) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return BigInt.asUintN(64, value);
  if (typeof value === "number" && Number.isInteger(value)) return BigInt.asUintN(64, BigInt(value));
  throw invalidArg(`inference request to model '${modelName}': 'sequence_id' must be an unsigned integer or a string, got ${String(value)}`);
}

/** What one request says about its sequence. */
export interface SequenceRequest {
  readonly id: CorrelationId;
  /** The sequence's identity: a numeric ID and a string of the same digits differ. */
  readonly key: string;
  readonly start: boolean;
  readonly end: boolean;
}

/**
 * Reads the sequence parameters as Triton's sequence_batch_scheduler.cc (Enqueue) checks them: a request of
 * several batch elements is refused first, then one without a correlation ID.
 */
export function sequenceRequestOf(modelName: string, parameters: Readonly<Record<string, ParameterValue>> | undefined, batchSize: number): SequenceRequest {
  if (batchSize > 1) throw invalidArg(`inference request to model '${modelName}' must specify batch-size 1 due to requirements of sequence batcher`);
  const id = correlationIdOf(modelName, parameters?.["sequence_id"]);
  if (id === undefined) throw invalidArg(`inference request to model '${modelName}' must specify a non-zero or non-empty correlation ID`);
  return { id, key: `${typeof id}:${id}`, start: parameters?.["sequence_start"] === true, end: parameters?.["sequence_end"] === true };
}

function flagTensor(spec: ControlInputSpec, value: number | boolean, batching: boolean): Tensor {
  const size = ELEMENT_BYTE_SIZE[spec.datatype];
  const data = new Uint8Array(size);
  const view = new DataView(data.buffer);
  switch (spec.datatype) {
    case "BOOL": view.setUint8(0, value ? 1 : 0); break;
    case "INT32": view.setInt32(0, Number(value), true); break;
    case "FP32": view.setFloat32(0, Number(value), true); break;
    default: throw invalidArg(`control input '${spec.name}' has unsupported datatype ${spec.datatype}`);
  }
  return { name: spec.name, datatype: spec.datatype, shape: batching ? [1, 1] : [1], data };
}

/**
 * The CORRID control as Triton's SetControlTensors fills it: a string ID as one BYTES element; a numeric ID's
 * low-order bytes in the control's type (a 32-bit CORRID holds the low 32 bits). A numeric CORRID cannot hold a
 * string ID, and a STRING CORRID gets a numeric ID as its decimal text (Triton leaves both undefined). A null
 * request (READY false) gets 0, or an empty string.
 */
function correlationIdTensor(spec: ControlInputSpec, id: CorrelationId | undefined, modelName: string, batching: boolean): Tensor {
  const shape = batching ? [1, 1] : [1];
  if (spec.datatype === "BYTES") {
    return { name: spec.name, datatype: "BYTES", shape, data: joinBytesElements([new TextEncoder().encode(id === undefined ? "" : String(id))]) };
  }
  if (typeof id === "string") {
    throw invalidArg(`inference request to model '${modelName}' must specify an unsigned integer correlation ID: its CORRID control input '${spec.name}' is ${spec.datatype}, got string '${id}'`);
  }
  const size = ELEMENT_BYTE_SIZE[spec.datatype];
  const data = new Uint8Array(size);
  const view = new DataView(data.buffer);
  if (size === 8) view.setBigUint64(0, id ?? 0n, true);
  else view.setUint32(0, Number(BigInt.asUintN(32, id ?? 0n)), true);
  return { name: spec.name, datatype: spec.datatype, shape, data };
}

/**
 * The control tensors of one request (Triton's SetControlTensors): START/END/READY from its flags, CORRID from its
 * ID. `request` undefined is a null request filling an empty batch position: every flag false, CORRID 0.
 */
export function controlTensors(specs: readonly ControlInputSpec[], modelName: string, request: SequenceRequest | undefined, batching: boolean): Tensor[] {
  const flags: Record<Exclude<ControlKind, "CORRID">, boolean> = {
    START: request?.start ?? false, END: request?.end ?? false, READY: request !== undefined,
  };
  return specs.map((spec) => spec.kind === "CORRID"
    ? correlationIdTensor(spec, request?.id, modelName, batching)
    : flagTensor(spec, spec.falseTrue[flags[spec.kind] ? 1 : 0], batching));
}
