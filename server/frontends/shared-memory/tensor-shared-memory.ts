import { type InferRequest, type InferResponse, invalidArg, type Tensor } from "../../core/index";
import type { SharedMemoryLease, SharedMemoryReference, SystemSharedMemory } from "./system-shared-memory";

/** The tensors of one request that live in shared memory, by tensor name (plain objects: they cross threads). */
export interface TensorSharedMemory {
  readonly inputs: Readonly<Record<string, SharedMemoryReference>>;
  readonly outputs: Readonly<Record<string, SharedMemoryReference>>;
}

/** The tensors of a request that uses shared memory; undefined when it uses none, so that case costs nothing later. */
export function sharedMemoryOf(
  inputs: Readonly<Record<string, SharedMemoryReference>>, outputs: Readonly<Record<string, SharedMemoryReference>>,
): TensorSharedMemory | undefined {
  for (const _ in inputs) return { inputs, outputs };
  for (const _ in outputs) return { inputs, outputs };
  return undefined;
}

/** Where an input in shared memory stands in for its data, and an output in shared memory for its bytes. */
export const NO_DATA = new Uint8Array(0);

/** The value type a parameter must have: each frontend names it in its own words (JSON type, protobuf field). */
type ParameterKind = "string" | "integer";

/**
 * Reads one parameter of a tensor from a frontend's parameter map: undefined when absent, its value when of `kind`;
 * throws Triton's "invalid value type" error otherwise.
 */
export type ParameterReader<Parameters> = (parameters: Parameters, key: string, kind: ParameterKind, tensorName: string) => string | number | undefined;

function checkSizeParameter(tensorName: string, region: string | undefined, key: string, value: number | undefined): void {
  if (value === undefined) return;
  if (region === undefined) throw invalidArg(`'${key}' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
  if (value < 0) throw invalidArg(`'${key}' of tensor '${tensorName}' must not be negative, got ${value}`);
}

/**
 * A tensor's `shared_memory_region`, `shared_memory_byte_size` and `shared_memory_offset` parameters (Triton's
 * ParseSharedMemoryParams, with its messages), or undefined when the tensor does not use shared memory.
 */
export function sharedMemoryReference<Parameters>(
  tensorName: string, parameters: Parameters, read: ParameterReader<Parameters>,
): SharedMemoryReference | undefined {
  const region = read(parameters, "shared_memory_region", "string", tensorName) as string | undefined;
  const offset = read(parameters, "shared_memory_offset", "integer", tensorName) as number | undefined;
  const byteSize = read(parameters, "shared_memory_byte_size", "integer", tensorName) as number | undefined;
  checkSizeParameter(tensorName, region, "shared_memory_offset", offset);
  checkSizeParameter(tensorName, region, "shared_memory_byte_size", byteSize);
  if (region === undefined) return undefined;
  if (byteSize === undefined) {
    throw invalidArg(`'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${tensorName}'`);
  }
  return { region, offset: offset ?? 0, byteSize };
}

/** Triton refuses an output that asks for both. */
export function refuseSharedMemoryClassification(outputName: string): never {
  throw invalidArg(`output '${outputName}': output can't set both 'shared_memory_region' and 'classification'`);
}

/** An output written to shared memory: the response names its region and size instead of carrying its data. */
export interface PlacedOutput {
  readonly region: string;
  readonly byteSize: number;
}

/**
 * One request's use of shared memory: its regions held from before the request is decoded into tensors until
 * its outputs are written, so an unregistration meanwhile cannot pull the file away.
 */
class SharedMemoryExchange {
  readonly #inputs: [string, SharedMemoryLease][] = [];
  readonly #outputs: [string, SharedMemoryReference, SharedMemoryLease][] = [];

  /** Leases every region the request names; throws (holding nothing) when one is missing or too small. */
  constructor(registry: SystemSharedMemory, tensors: TensorSharedMemory) {
    registry.admitInputBytes(Object.values(tensors.inputs).reduce((sum, reference) => sum + reference.byteSize, 0));
    try {
      for (const [name, reference] of Object.entries(tensors.inputs)) this.#inputs.push([name, registry.lease(reference)]);
      for (const [name, reference] of Object.entries(tensors.outputs)) this.#outputs.push([name, reference, registry.lease(reference)]);
    } catch (error) {
      this.release();
      throw error;
    }
  }

  /** The request's inputs, those in shared memory filled with their bytes (read now, before the request runs). */
  async readInputs(inputs: readonly Tensor[]): Promise<Tensor[]> {
    const bytes = new Map(await Promise.all(this.#inputs.map(async ([name, lease]) => [name, await lease.read()] as const)));
    return inputs.map((input) => {
      const data = bytes.get(input.name);
      return data === undefined ? input : { ...input, data };
    });
  }

  /** Writes the outputs asked for in shared memory; refuses one larger than its place, as Triton. */
  async writeOutputs(response: InferResponse): Promise<ReadonlyMap<string, PlacedOutput>> {
    const placed = new Map<string, PlacedOutput>();
    const writes: Promise<void>[] = [];
    for (const [name, reference, lease] of this.#outputs) {
      const output = response.outputs.find((candidate) => candidate.name === name);
      if (output === undefined) continue;
      if (output.data.byteLength > reference.byteSize) {
        throw invalidArg(`shared memory size specified with the request for output '${name}' (${reference.byteSize} bytes) should be at least ${output.data.byteLength} bytes to hold the results`);
      }
      writes.push(lease.write(output.data));
      placed.set(name, { region: reference.region, byteSize: output.data.byteLength });
    }
    await Promise.all(writes);
    return placed;
  }

  /** Gives every region back; a lease released twice counts once. */
  release(): void {
    for (const [, lease] of this.#inputs) lease.release();
    for (const [, , lease] of this.#outputs) lease.release();
  }
}

/** An answer and where its shared-memory outputs went. */
interface SharedMemoryInferResult {
  readonly response: InferResponse;
  readonly placed: ReadonlyMap<string, PlacedOutput>;
}

/** No output of the response went to shared memory. */
export const NOTHING_PLACED: ReadonlyMap<string, PlacedOutput> = new Map();

/**
 * Runs `infer` with the request's shared-memory inputs read in and its shared-memory outputs written out after;
 * a request without shared memory goes straight through.
 */
export async function inferWithSharedMemory(
  registry: SystemSharedMemory, tensors: TensorSharedMemory | undefined, request: InferRequest, infer: (request: InferRequest) => Promise<InferResponse>,
): Promise<SharedMemoryInferResult> {
  if (tensors === undefined) return { response: await infer(request), placed: NOTHING_PLACED };
  const exchange = new SharedMemoryExchange(registry, tensors);
  try {
    const response = await infer({ ...request, inputs: await exchange.readInputs(request.inputs) });
    return { response, placed: await exchange.writeOutputs(response) };
  } finally {
    exchange.release();
  }
}
