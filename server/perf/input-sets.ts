import { type DataType, elementCountOf, type InferInput, type TensorData, type TensorMetadata, bytesToTensorData, toTensorData } from "../client/index";
import { SeededRandom } from "../model-builder/seeded-random";
import { PerfError } from "./perf-error";
import { randomTensorData } from "./random-tensor-data";

/**
 * `--input-data`: generated data, or a perf_analyzer data file already parsed:
 * `{"data": [{"INPUT0": [1, 2, ...] | {"content": [...], "shape": [...]} | {"b64": "..."}, ...}, ...]}`.
 */
export type InputDataSource =
  | { readonly kind: "random"; readonly seed: number }
  | { readonly kind: "zero" }
  | { readonly kind: "file"; readonly path: string; readonly document: unknown };

export interface InputSetOptions {
  /** `-b`: requests carry this many batch elements (models with max_batch_size > 0). */
  readonly batchSize: number;
  /** The model's max_batch_size; 0 means the model does not batch and shapes have no batch dimension. */
  readonly maxBatchSize: number;
  /** `--shape NAME:d1,d2`: shapes without the batch dimension, for inputs with variable dimensions. */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly source: InputDataSource;
}

type FileEntry = Readonly<Record<string, unknown>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fileEntries(source: Extract<InputDataSource, { kind: "file" }>): FileEntry[] {
  const data = isRecord(source.document) ? source.document["data"] : undefined;
  if (!Array.isArray(data) || data.length === 0 || !data.every(isRecord)) {
    throw new PerfError(`${source.path}: expected {"data": [{"<input>": [...]}, ...]} with at least one entry`);
  }
  return data;
}

/** Shape of one batch element: the model's dims with variable ones taken from --shape or the data file. */
function elementShape(input: TensorMetadata, options: InputSetOptions, fileShape: readonly number[] | undefined): number[] {
  const dims = options.maxBatchSize > 0 ? input.shape.slice(1) : [...input.shape];
  const given = fileShape ?? options.shapes.get(input.name);
  if (given === undefined) {
    if (dims.includes(-1)) {
      throw new PerfError(`input '${input.name}' has a variable dimension (shape [${dims.join(",")}]); give it with --shape ${input.name}:${dims.map((d) => (d === -1 ? "N" : d)).join(",")}`);
    }
    return dims;
  }
  const fits = given.length === dims.length && given.every((dim, i) => Number.isInteger(dim) && dim >= 0 && (dims[i] === -1 || dims[i] === dim));
  if (!fits) throw new PerfError(`shape [${given.join(",")}] for input '${input.name}' does not fit the model's [${dims.join(",")}]`);
  return [...given];
}

/** One batch element's data for `input` from a file entry value (a flat array, {content, shape} or {b64}). */
function fileValue(input: TensorMetadata, value: unknown, path: string): { data: TensorData; shape: readonly number[] | undefined } {
  const where = `${path}: input '${input.name}'`;
  try {
    if (Array.isArray(value)) return { data: toTensorData(input.datatype, flatten(value), input.name), shape: undefined };
    if (isRecord(value) && Array.isArray(value["content"])) {
      const shape = value["shape"];
      if (shape !== undefined && (!Array.isArray(shape) || !shape.every((d) => typeof d === "number"))) throw new PerfError(`${where}: 'shape' must be an array of numbers`);
      return { data: toTensorData(input.datatype, flatten(value["content"]), input.name), shape: shape as number[] | undefined };
    }
    if (isRecord(value) && typeof value["b64"] === "string") {
      const bytes = new Uint8Array(Buffer.from(value["b64"], "base64"));
      return { data: input.datatype === "BYTES" ? [bytes] : bytesToTensorData(input.datatype, bytes, input.name), shape: undefined };
    }
  } catch (error) {
    if (error instanceof PerfError) throw error;
    throw new PerfError(`${where}: ${(error as Error).message}`);
  }
  throw new PerfError(`${where}: expected an array, {"content": [...], "shape": [...]} or {"b64": "..."}`);
}

function flatten(values: readonly unknown[]): never[] {
  return values.flat(Infinity) as never[];
}

/** `copies` repetitions of `data` one after another (a batch of identical elements). */
function repeat(datatype: DataType, data: TensorData, copies: number): TensorData {
  if (copies === 1) return data;
  if (datatype === "BYTES") return Array.from({ length: copies }, () => data as Uint8Array[]).flat();
  const single = data as Exclude<TensorData, Uint8Array[]>;
  const out = new (single.constructor as new (length: number) => typeof single)(single.length * copies);
  for (let i = 0; i < copies; i++) (out as Uint8Array).set(single as Uint8Array, i * single.length);
  return out;
}

/**
 * The request inputs to send, one set per data-file entry (one set for generated data). Each batch element
 * holds the same data; shapes get the batch dimension when the model batches. Throws a {@link PerfError} for
 * a variable dimension nobody gave, a shape that does not fit, or data that does not match its shape.
 */
export function buildInputSets(inputs: readonly TensorMetadata[], options: InputSetOptions): InferInput[][] {
  const source = options.source;
  const entries: (FileEntry | undefined)[] = source.kind === "file" ? fileEntries(source) : [undefined];
  const random = source.kind === "random" ? new SeededRandom(source.seed) : undefined;
  const path = source.kind === "file" ? source.path : "";
  return entries.map((entry, entryIndex) => inputs.map((input): InferInput => {
    let data: TensorData;
    let shape: number[];
    if (entry === undefined) {
      shape = elementShape(input, options, undefined);
      data = randomTensorData(input.datatype, elementCountOf(shape), random);
    } else {
      if (!(input.name in entry)) throw new PerfError(`${path}: entry ${entryIndex} has no data for input '${input.name}'`);
      const value = fileValue(input, entry[input.name], path);
      shape = elementShape(input, options, value.shape);
      data = value.data;
      if (data.length !== elementCountOf(shape)) {
        throw new PerfError(`${path}: input '${input.name}' of entry ${entryIndex} has ${data.length} elements, its shape [${shape.join(",")}] needs ${elementCountOf(shape)}`);
      }
    }
    const batched = options.maxBatchSize > 0;
    return {
      name: input.name,
      datatype: input.datatype,
      shape: batched ? [options.batchSize, ...shape] : shape,
      data: repeat(input.datatype, data, batched ? options.batchSize : 1),
    };
  }));
}
