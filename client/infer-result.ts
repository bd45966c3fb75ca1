import type { DataType } from "../protocol/datatypes";
import type { InferTiming, OutputTensor, ParameterValue } from "./infer-types";
import type { TensorDataByType } from "./tensor-data";

const decoder = new TextDecoder();

export interface InferResultFields {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly outputs: readonly OutputTensor[];
  readonly timing: InferTiming;
}

/** An inference response: the outputs as typed arrays, with accessors that check names and datatypes. */
export class InferResult implements InferResultFields {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly outputs: readonly OutputTensor[];
  readonly timing: InferTiming;

  constructor(fields: InferResultFields) {
    this.modelName = fields.modelName;
    this.modelVersion = fields.modelVersion;
    this.id = fields.id;
    this.parameters = fields.parameters;
    this.outputs = fields.outputs;
    this.timing = fields.timing;
  }

  /** The output called `name`; throws a `RangeError` listing the outputs present when there is none. */
  output(name: string): OutputTensor {
    const output = this.outputs.find((candidate) => candidate.name === name);
    if (output === undefined) {
      throw new RangeError(`the response has no output '${name}' (it has ${this.outputs.map((o) => `'${o.name}'`).join(", ") || "none"})`);
    }
    return output;
  }

  /** The data of output `name`, typed for `datatype`; throws a `TypeError` when the output has another datatype. */
  data<T extends DataType>(name: string, datatype: T): TensorDataByType[T] {
    const output = this.output(name);
    if (output.datatype !== datatype) throw new TypeError(`output '${name}' is ${output.datatype}, not ${datatype}`);
    return output.data as TensorDataByType[T];
  }

  /** A BYTES output decoded as UTF-8 strings (classification results, text). */
  strings(name: string): string[] {
    return this.data(name, "BYTES").map((element) => decoder.decode(element));
  }
}
