import { type DataType, dataTypeFromConfig, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { invalidArg } from "../errors";
import type { InferRequest, ParameterValue } from "../request/inference-request";
import type { ModelConfig } from "../model-config/model-config";
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

const KIND_BY_CONFIG: Readonly<Record<string, ControlKind>> = {
  CONTROL_SEQUENCE_START: "START", CONTROL_SEQUENCE_END: "END", CONTROL_SEQUENCE_READY: "READY", CONTROL_SEQUENCE_CORRID: "CORRID",
};

/** The CORRID datatypes Triton accepts (sequence_batch_scheduler.cc, CreateCorrelationIDControl). */
const CORRID_DATATYPES: ReadonlySet<DataType> = new Set(["UINT64", "INT64", "UINT32", "INT32", "BYTES"]);

export function controlInputsOf(config: ModelConfig): ControlInputSpec[] {
  const specs: ControlInputSpec[] = [];
  for (const input of config.sequence_batching?.control_input ?? []) {
    for (const control of input.control) {
      const kind = KIND_BY_CONFIG[control.kind];
      if (kind === undefined) throw new Error(`sequence control '${control.kind}' of input '${input.name}' is not supported`);
      if (kind === "CORRID") {
        const datatype = dataTypeFromConfig(control.data_type);
        if (datatype === undefined || !CORRID_DATATYPES.has(datatype)) {
          throw new Error(`unexpected control data type, expected TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32, or TYPE_STRING for CONTROL_SEQUENCE_CORRID for ${config.name}`);
        }
        specs.push({ name: input.name, datatype, kind, falseTrue: [0, 0] });
      } else if (control.int32_false_true.length === 2) {
        specs.push({ name: input.name, datatype: "INT32", kind, falseTrue: [control.int32_false_true[0]!, control.int32_false_true[1]!] });
      } else if (control.fp32_false_true.length === 2) {
        specs.push({ name: input.name, datatype: "FP32", kind, falseTrue: [control.fp32_false_true[0]!, control.fp32_false_true[1]!] });
      } else if (control.bool_false_true.length === 2) {
        specs.push({ name: input.name, datatype: "BOOL", kind, falseTrue: [control.bool_false_true[0]!, control.bool_false_true[1]!] });
      } else {
        throw new Error(`control input '${input.name}' needs int32_false_true, fp32_false_true or bool_false_true with two values`);
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

function controlTensor(spec: ControlInputSpec, values: readonly (number | boolean)[], batching: boolean): Tensor {
  const size = ELEMENT_BYTE_SIZE[spec.datatype];
  const data = new Uint8Array(size * values.length);
  const view = new DataView(data.buffer);
  values.forEach((value, i) => {
    const o = i * size;
    switch (spec.datatype) {
      case "BOOL": view.setUint8(o, value ? 1 : 0); break;
      case "INT32": view.setInt32(o, Number(value), true); break;
      case "FP32": view.setFloat32(o, Number(value), true); break;
      default: throw invalidArg(`control input '${spec.name}' has unsupported datatype ${spec.datatype}`);
    }
  });
  return { name: spec.name, datatype: spec.datatype, shape: batching ? [values.length, 1] : [1], data };
}

/**
 * The CORRID control as Triton's SetControlTensors fills it: a string ID as one BYTES element; a numeric ID's
 * low-order bytes in the control's type (a 32-bit CORRID holds the low 32 bits). A numeric CORRID cannot hold a
 * string ID, and a STRING CORRID gets a numeric ID as its decimal text (Triton leaves both undefined).
 */
function correlationIdTensor(spec: ControlInputSpec, id: CorrelationId, modelName: string, batchSize: number, batching: boolean): Tensor {
  const shape = batching ? [batchSize, 1] : [1];
  if (spec.datatype === "BYTES") {
    const element = new TextEncoder().encode(String(id));
    return { name: spec.name, datatype: "BYTES", shape, data: joinBytesElements(Array.from({ length: batchSize }, () => element)) };
  }
  if (typeof id === "string") {
    throw invalidArg(`inference request to model '${modelName}' must specify an unsigned integer correlation ID: its CORRID control input '${spec.name}' is ${spec.datatype}, got string '${id}'`);
  }
  const size = ELEMENT_BYTE_SIZE[spec.datatype];
  const data = new Uint8Array(size * batchSize);
  const view = new DataView(data.buffer);
  for (let i = 0; i < batchSize; i++) {
    if (size === 8) view.setBigUint64(i * size, id, true);
    else view.setUint32(i * size, Number(BigInt.asUintN(32, id)), true);
  }
  return { name: spec.name, datatype: spec.datatype, shape, data };
}

interface ActiveSequence {
  lastSeenUs: number;
  /** Requests of one sequence run one after another, in arrival order. */
  tail: Promise<unknown>;
}

const hrtimeUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Triton's sequence batcher for stateless graphs (triton-inference-server/core src/sequence_batch_scheduler/):
 * checks `sequence_id` / `sequence_start` / `sequence_end` as its Enqueue does, produces the control tensors
 * (START, END, READY, CORRID) the model expects, and keeps each sequence's requests in order. A sequence idle for
 * `max_sequence_idle_microseconds` (1 s when 0, Triton's default) is ended, as Triton's reaper ends it: a later
 * request for it without START is refused.
 */
export class SequenceTracker {
  readonly #modelName: string;
  readonly #controls: readonly ControlInputSpec[];
  readonly #idleUs: number;
  readonly #nowUs: () => number;
  readonly #active = new Map<string, ActiveSequence>();

  constructor(modelName: string, controls: readonly ControlInputSpec[], idleUs: number, nowUs: () => number = hrtimeUs) {
    this.#modelName = modelName;
    this.#controls = controls;
    this.#idleUs = idleUs > 0 ? idleUs : 1_000_000;
    this.#nowUs = nowUs;
  }

  /** Validates the sequence parameters; returns the control tensors and a runner that keeps sequence order. */
  prepare(parameters: InferRequest["parameters"], batchSize: number, batching: boolean): { controls: Tensor[]; run: <T>(execute: () => Promise<T>) => Promise<T> } {
    // Triton's sequence_batch_scheduler.cc (Enqueue) refuses statically batched requests before anything else.
    if (batchSize > 1) {
      throw invalidArg(`inference request to model '${this.#modelName}' must specify batch-size 1 due to requirements of sequence batcher`);
    }
    const id = correlationIdOf(this.#modelName, parameters?.["sequence_id"]);
    if (id === undefined) {
      throw invalidArg(`inference request to model '${this.#modelName}' must specify a non-zero or non-empty correlation ID`);
    }
    const start = parameters?.["sequence_start"] === true;
    const end = parameters?.["sequence_end"] === true;
    const key = `${typeof id}:${id}`;
    const nowUs = this.#nowUs();
    this.#endIdle(nowUs);
    const known = this.#active.get(key);
    if (known === undefined && !start) {
      throw invalidArg(`inference request for sequence ${id} to model '${this.#modelName}' must specify the START flag on the first request of the sequence`);
    }
    const flags: Record<Exclude<ControlKind, "CORRID">, boolean> = { START: start, END: end, READY: true };
    const controls = this.#controls.map((spec) => {
      if (spec.kind === "CORRID") return correlationIdTensor(spec, id, this.#modelName, batchSize, batching);
      const value = spec.falseTrue[flags[spec.kind] ? 1 : 0];
      return controlTensor(spec, Array.from({ length: batchSize }, () => value), batching);
    });
    const sequence = known ?? { lastSeenUs: nowUs, tail: Promise.resolve() };
    sequence.lastSeenUs = nowUs;
    if (end) this.#active.delete(key);
    else this.#active.set(key, sequence);
    return {
      controls,
      run: <T>(execute: () => Promise<T>): Promise<T> => {
        const result = sequence.tail.then(execute, execute);
        sequence.tail = result.catch(() => undefined);
        return result;
      },
    };
  }

  /** Triton's reaper: a sequence whose last request came `max_sequence_idle_microseconds` ago or more ends. */
  #endIdle(nowUs: number): void {
    for (const [key, sequence] of this.#active) {
      if (nowUs - sequence.lastSeenUs >= this.#idleUs) this.#active.delete(key);
    }
  }
}
