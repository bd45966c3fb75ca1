import { type DataType, dataTypeFromConfig, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { invalidArg } from "../errors";
import type { InferRequest } from "../request/inference-request";
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

export function controlInputsOf(config: ModelConfig): ControlInputSpec[] {
  const specs: ControlInputSpec[] = [];
  for (const input of config.sequence_batching?.control_input ?? []) {
    for (const control of input.control) {
      const kind = KIND_BY_CONFIG[control.kind];
      if (kind === undefined) throw new Error(`sequence control '${control.kind}' of input '${input.name}' is not supported`);
      if (kind === "CORRID") {
        const datatype = dataTypeFromConfig(control.data_type);
        if (datatype === undefined) throw new Error(`CORRID control input '${input.name}' needs a data_type`);
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

function controlTensor(spec: ControlInputSpec, value: number | boolean | bigint | string, batchSize: number, batching: boolean): Tensor {
  const shape = batching ? [batchSize, 1] : [1];
  if (spec.datatype === "BYTES") {
    const element = new TextEncoder().encode(String(value));
    return { name: spec.name, datatype: "BYTES", shape, data: joinBytesElements(Array.from({ length: batchSize }, () => element)) };
  }
  const size = ELEMENT_BYTE_SIZE[spec.datatype];
  const data = new Uint8Array(size * batchSize);
  const view = new DataView(data.buffer);
  for (let i = 0; i < batchSize; i++) {
    const o = i * size;
    switch (spec.datatype) {
      case "BOOL": view.setUint8(o, value ? 1 : 0); break;
      case "INT32": view.setInt32(o, Number(value), true); break;
      case "UINT32": view.setUint32(o, Number(value), true); break;
      case "FP32": view.setFloat32(o, Number(value), true); break;
      case "INT64": view.setBigInt64(o, BigInt(value), true); break;
      case "UINT64": view.setBigUint64(o, BigInt(value), true); break;
      default: throw invalidArg(`control input '${spec.name}' has unsupported datatype ${spec.datatype}`);
    }
  }
  return { name: spec.name, datatype: spec.datatype, shape, data };
}

interface ActiveSequence {
  lastSeenUs: number;
  /** Requests of one sequence run one after another, in arrival order. */
  tail: Promise<unknown>;
}

/**
 * Triton's sequence extension for stateless graphs: checks `sequence_id` / `sequence_start` / `sequence_end`,
 * produces the control tensors (START, END, READY, CORRID) the model expects, and keeps each sequence's requests
 * in order. Sequences idle longer than `max_sequence_idle_microseconds` are forgotten.
 */
export class SequenceTracker {
  readonly #modelName: string;
  readonly #controls: readonly ControlInputSpec[];
  readonly #idleUs: number;
  readonly #active = new Map<string, ActiveSequence>();

  constructor(modelName: string, controls: readonly ControlInputSpec[], idleUs: number) {
    this.#modelName = modelName;
    this.#controls = controls;
    this.#idleUs = idleUs > 0 ? idleUs : 1_000_000;
  }

  /** Validates the sequence parameters; returns the control tensors and a runner that keeps sequence order. */
  prepare(parameters: InferRequest["parameters"], batchSize: number, batching: boolean): { controls: Tensor[]; run: <T>(execute: () => Promise<T>) => Promise<T> } {
    // Triton's sequence_batch_scheduler.cc (Enqueue) refuses statically batched requests before anything else.
    if (batchSize > 1) {
      throw invalidArg(`inference request to model '${this.#modelName}' must specify batch-size 1 due to requirements of sequence batcher`);
    }
    const id = parameters?.["sequence_id"];
    if (id === undefined || id === 0 || id === 0n || id === "" || typeof id === "boolean") {
      throw invalidArg(`inference request to model '${this.#modelName}' must specify a non-zero or non-empty correlation ID`);
    }
    const start = parameters?.["sequence_start"] === true;
    const end = parameters?.["sequence_end"] === true;
    const key = String(id);
    const nowUs = Number(process.hrtime.bigint() / 1000n);
    this.#forgetIdle(nowUs);
    let sequence = this.#active.get(key);
    if (sequence === undefined) {
      if (!start) {
        throw invalidArg(`inference request for sequence ${key} to model '${this.#modelName}' must specify the START flag on the first request of the sequence`);
      }
      sequence = { lastSeenUs: nowUs, tail: Promise.resolve() };
      this.#active.set(key, sequence);
    }
    sequence.lastSeenUs = nowUs;
    if (end) this.#active.delete(key);
    const flags: Record<Exclude<ControlKind, "CORRID">, boolean> = { START: start, END: end, READY: true };
    const controls = this.#controls.map((spec) => controlTensor(
      spec, spec.kind === "CORRID" ? id : spec.falseTrue[flags[spec.kind] ? 1 : 0]!, batchSize, batching,
    ));
    const active = sequence;
    return {
      controls,
      run: <T>(execute: () => Promise<T>): Promise<T> => {
        const result = active.tail.then(execute, execute);
        active.tail = result.catch(() => undefined);
        return result;
      },
    };
  }

  #forgetIdle(nowUs: number): void {
    for (const [key, sequence] of this.#active) {
      if (nowUs - sequence.lastSeenUs > this.#idleUs) this.#active.delete(key);
    }
  }
}
