import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { type DataType, elementCountOf, type InferInput, type TensorData, type TensorMetadata, bytesToTensorData, toTensorData } from "../../client/index";
import { SeededRandom } from "../model-builder/index";
import { PerfError } from "./perf-error";
import { randomTensorData } from "./random-tensor-data";

/**
 * `--input-data`: generated data, a perf_analyzer data file already parsed
 * (`{"data": [{"INPUT0": [1, 2, ...] | {"content": [...], "shape": [...]} | {"b64": "..."}, ...}, ...]}`), or a
 * directory's files already read (name -> bytes; see {@link buildInputSets}).
 */
export type InputDataSource =
  | { readonly kind: "random"; readonly seed: number }
  | { readonly kind: "zero" }
  | { readonly kind: "file"; readonly path: string; readonly document: unknown }
  | { readonly kind: "directory"; readonly path: string; readonly files: ReadonlyMap<string, Uint8Array> };

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

/** What a set holds for one input: one batch element's data, and its shape when the source gives one. */
type ElementData = { readonly data: TensorData; readonly shape: readonly number[] | undefined };

/**
 * A directory's data sets. perf_analyzer's layout - a file named after every input, holding one batch element:
 * raw little-endian bytes, or for BYTES one element per line - gives one set. Otherwise, for a model whose only
 * input is BYTES, every file is a set of its own holding the file as the one element: a folder of images.
 */
function directoryEntries(inputs: readonly TensorMetadata[], source: Extract<InputDataSource, { kind: "directory" }>): Map<string, ElementData>[] {
  if (inputs.every((input) => source.files.has(input.name))) {
    return [new Map(inputs.map((input): [string, ElementData] => {
      const bytes = source.files.get(input.name)!;
      try {
        const data = input.datatype === "BYTES"
          ? new TextDecoder().decode(bytes).split("\n").filter((line, i, lines) => line !== "" || i < lines.length - 1).map((line) => new TextEncoder().encode(line))
          : bytesToTensorData(input.datatype, bytes, input.name);
        return [input.name, { data, shape: undefined }];
      } catch (error) {
        throw new PerfError(`${source.path}/${input.name}: ${(error as Error).message}`);
      }
    }))];
  }
  const only = inputs.length === 1 ? inputs[0]! : undefined;
  if (only === undefined || only.datatype !== "BYTES") {
    throw new PerfError(`${source.path}: expected a file named after each input (${inputs.map((input) => input.name).join(", ")}), or, for a model with one BYTES input, one file per element`);
  }
  return [...source.files.values()].map((bytes) => new Map([[only.name, { data: [bytes], shape: undefined }]]));
}

function fileEntryData(inputs: readonly TensorMetadata[], source: Extract<InputDataSource, { kind: "file" }>): Map<string, ElementData>[] {
  return fileEntries(source).map((entry, entryIndex) => new Map(inputs.map((input): [string, ElementData] => {
    if (!(input.name in entry)) throw new PerfError(`${source.path}: entry ${entryIndex} has no data for input '${input.name}'`);
    return [input.name, fileValue(input, entry[input.name], source.path)];
  })));
}

/**
 * The request inputs to send, one set per data-file entry or directory set (one set for generated data). Each
 * batch element holds the same data; shapes get the batch dimension when the model batches. Throws a
 * {@link PerfError} for a variable dimension nobody gave, a shape that does not fit, or data that does not match
 * its shape.
 */
export function buildInputSets(inputs: readonly TensorMetadata[], options: InputSetOptions): InferInput[][] {
  const source = options.source;
  const random = source.kind === "random" ? new SeededRandom(source.seed) : undefined;
  const where = source.kind === "file" || source.kind === "directory" ? source.path : "";
  const entries: (Map<string, ElementData> | undefined)[] = source.kind === "file"
    ? fileEntryData(inputs, source)
    : source.kind === "directory" ? directoryEntries(inputs, source) : [undefined];
  return entries.map((entry, entryIndex) => inputs.map((input): InferInput => {
    let data: TensorData;
    let shape: number[];
    const given = entry?.get(input.name);
    if (given === undefined) {
      shape = elementShape(input, options, undefined);
      data = randomTensorData(input.datatype, elementCountOf(shape), random);
    } else {
      shape = elementShape(input, options, given.shape);
      data = given.data;
      if (data.length !== elementCountOf(shape)) {
        throw new PerfError(`${where}: input '${input.name}' of entry ${entryIndex} has ${data.length} elements, its shape [${shape.join(",")}] needs ${elementCountOf(shape)}`);
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

function readError(what: string, error: unknown): PerfError {
  return new PerfError(`cannot read --input-data ${what}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

/** `--input-data`'s value as a source: `random`, `zero`, a directory (its visible files, by name) or a JSON data file. */
export async function readInputDataSource(inputData: string): Promise<InputDataSource> {
  if (inputData === "random") return { kind: "random", seed: 1 };
  if (inputData === "zero") return { kind: "zero" };
  const isDirectory = await stat(inputData).then((stats) => stats.isDirectory(), (error: unknown) => {
    throw readError(inputData, error);
  });
  if (isDirectory) {
    const names = (await readdir(inputData, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && !entry.name.startsWith("."))
      .map((entry) => entry.name)
      .sort();
    if (names.length === 0) throw new PerfError(`--input-data ${inputData} is a directory without files`);
    const files = new Map<string, Uint8Array>();
    for (const name of names) {
      files.set(name, new Uint8Array(await readFile(path.join(inputData, name)).catch((error: unknown) => {
        throw readError(path.join(inputData, name), error);
      })));
    }
    return { kind: "directory", path: inputData, files };
  }
  const text = await readFile(inputData, "utf8").catch((error: unknown) => {
    throw readError(inputData, error);
  });
  try {
    return { kind: "file", path: inputData, document: JSON.parse(text) };
  } catch (error) {
    throw new PerfError(`--input-data ${inputData} is not JSON: ${(error as Error).message}`);
  }
}
