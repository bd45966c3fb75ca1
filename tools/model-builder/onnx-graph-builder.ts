import os from "node:os";
import { toFloat16Array } from "../../protocol/float16";
import { type OnnxElementType } from "./onnx-element-type";
import {
  loadOnnxSchema,
  type OnnxAttributeMessage,
  type OnnxDimensionMessage,
  type OnnxModelMessage,
  type OnnxNodeMessage,
  type OnnxSchema,
  type OnnxTensorMessage,
  type OnnxValueInfoMessage,
} from "./onnx-schema";

/** A graph input/output dimension: a fixed size, or a symbolic name (e.g. `"N"` for a variable batch). */
export type OnnxDim = number | string;

/** An operator attribute; the kind is explicit because ONNX tells `INT` 1 and `FLOAT` 1.0 apart. */
export type OnnxAttributeValue =
  | { readonly kind: "INT"; readonly value: number }
  | { readonly kind: "INTS"; readonly value: readonly number[] }
  | { readonly kind: "FLOAT"; readonly value: number }
  | { readonly kind: "FLOATS"; readonly value: readonly number[] };

/** Typed arrays an initializer can be built from; the array type decides the ONNX element type. */
export type OnnxInitializerData = Float32Array | Float64Array | Int32Array | BigInt64Array;

export interface OnnxNodeSpec {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** Defaults to the first output's name. */
  readonly name?: string;
  readonly attributes?: Readonly<Record<string, OnnxAttributeValue>>;
}

export interface OnnxModelOptions {
  /** ONNX IR version; 8 is what ONNX 1.10-1.12 write and every current ONNX Runtime reads. */
  readonly irVersion?: number;
  /** Version of the default (`ai.onnx`) operator set. */
  readonly opsetVersion?: number;
  readonly producerName?: string;
  readonly producerVersion?: string;
}

const DEFAULT_IR_VERSION = 8;
const DEFAULT_OPSET_VERSION = 17;
const DEFAULT_PRODUCER_NAME = "gcp-inference-stack-model-builder";
const DEFAULT_PRODUCER_VERSION = "1";

function initializerElementType(data: OnnxInitializerData): OnnxElementType {
  if (data instanceof Float32Array) return "FLOAT";
  if (data instanceof Float64Array) return "DOUBLE";
  if (data instanceof Int32Array) return "INT32";
  return "INT64";
}

function codeOf(codes: Readonly<Record<string, number>>, name: string): number {
  const code = codes[name];
  if (code === undefined) throw new Error(`onnx.proto has no enum value ${name}`);
  return code;
}

function dimensionMessage(dim: OnnxDim): OnnxDimensionMessage {
  return typeof dim === "string" ? { dim_param: dim } : { dim_value: dim };
}

/**
 * Builds one ONNX graph step by step and serializes it as a `ModelProto`. It checks as it goes what ONNX
 * Runtime would otherwise reject at load time with a less direct message: duplicate value names, nodes that
 * read values not defined yet (nodes must come in topological order), graph outputs nothing produces, and
 * initializers whose data does not fill their shape. A builder is single-use and not shared across threads.
 */
export class OnnxGraphBuilder {
  private readonly schema: OnnxSchema = loadOnnxSchema();
  private readonly definedValues = new Set<string>();
  private readonly inputs: OnnxValueInfoMessage[] = [];
  private readonly outputs: OnnxValueInfoMessage[] = [];
  private readonly initializers: OnnxTensorMessage[] = [];
  private readonly nodes: OnnxNodeMessage[] = [];

  constructor(private readonly graphName: string) {}

  /** Declares a graph input and returns its name, for use as a node input. */
  addInput(name: string, elementType: OnnxElementType, dims: readonly OnnxDim[]): string {
    this.define(name);
    this.inputs.push(this.valueInfo(name, elementType, dims));
    return name;
  }

  /** Declares a graph output; some node (or a graph input) must produce a value of this name. */
  addOutput(name: string, elementType: OnnxElementType, dims: readonly OnnxDim[]): void {
    this.outputs.push(this.valueInfo(name, elementType, dims));
  }

  /** Adds a constant tensor stored as little-endian `raw_data` and returns its name. */
  addInitializer(name: string, dims: readonly number[], data: OnnxInitializerData): string {
    return this.addRawInitializer(name, dims, data, initializerElementType(data));
  }

  /** Adds a FLOAT16 constant, rounding each value to the nearest half, and returns its name. */
  addFloat16Initializer(name: string, dims: readonly number[], values: Float32Array): string {
    return this.addRawInitializer(name, dims, toFloat16Array(values), "FLOAT16");
  }

  private addRawInitializer(name: string, dims: readonly number[], data: OnnxInitializerData | Uint16Array, elementType: OnnxElementType): string {
    const elementCount = dims.reduce((product, dim) => product * dim, 1);
    if (data.length !== elementCount) {
      throw new Error(`initializer ${name}: ${data.length} values do not fill shape [${dims.join(",")}]`);
    }
    // raw_data is defined as little-endian; the typed array's bytes are in host order.
    if (os.endianness() !== "LE") throw new Error("the ONNX builder needs a little-endian host");
    this.define(name);
    this.initializers.push({
      name,
      dims: [...dims],
      data_type: codeOf(this.schema.elementTypeCodes, elementType),
      raw_data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    });
    return name;
  }

  /** Appends a node of the default operator set; its inputs must already be defined. */
  addNode(spec: OnnxNodeSpec): void {
    for (const input of spec.inputs) {
      if (!this.definedValues.has(input)) throw new Error(`node ${spec.opType} reads undefined value ${input}`);
    }
    for (const output of spec.outputs) this.define(output);
    const attribute: OnnxAttributeMessage[] = Object.entries(spec.attributes ?? {}).map(([name, attr]) => {
      const type = codeOf(this.schema.attributeTypeCodes, attr.kind);
      switch (attr.kind) {
        case "INT": return { name, type, i: attr.value };
        case "INTS": return { name, type, ints: [...attr.value] };
        case "FLOAT": return { name, type, f: attr.value };
        case "FLOATS": return { name, type, floats: [...attr.value] };
      }
    });
    this.nodes.push({
      name: spec.name ?? spec.outputs[0] ?? spec.opType,
      op_type: spec.opType,
      input: [...spec.inputs],
      output: [...spec.outputs],
      attribute,
    });
  }

  /** Serializes the graph as an ONNX `ModelProto` (the bytes of a `model.onnx` file). */
  toModelBytes(options: OnnxModelOptions = {}): Buffer {
    for (const output of this.outputs) {
      if (!this.definedValues.has(output.name)) throw new Error(`graph output ${output.name} is never produced`);
    }
    const model: OnnxModelMessage = {
      ir_version: options.irVersion ?? DEFAULT_IR_VERSION,
      producer_name: options.producerName ?? DEFAULT_PRODUCER_NAME,
      producer_version: options.producerVersion ?? DEFAULT_PRODUCER_VERSION,
      opset_import: [{ domain: "", version: options.opsetVersion ?? DEFAULT_OPSET_VERSION }],
      graph: {
        name: this.graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    };
    const invalid = this.schema.ModelProto.verify(model);
    if (invalid !== null) throw new Error(`invalid ONNX model ${this.graphName}: ${invalid}`);
    const bytes = this.schema.ModelProto.encode(model).finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private define(name: string): void {
    if (this.definedValues.has(name)) throw new Error(`value ${name} is defined twice in graph ${this.graphName}`);
    this.definedValues.add(name);
  }

  private valueInfo(name: string, elementType: OnnxElementType, dims: readonly OnnxDim[]): OnnxValueInfoMessage {
    return {
      name,
      type: {
        tensor_type: {
          elem_type: codeOf(this.schema.elementTypeCodes, elementType),
          shape: { dim: dims.map(dimensionMessage) },
        },
      },
    };
  }
}
