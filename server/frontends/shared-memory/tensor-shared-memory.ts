import { InferenceError, type InferResponse, type Tensor } from "../../core/index";
import type { SharedMemoryLease, SharedMemoryReference, SystemSharedMemory } from "./system-shared-memory";

/** The tensors of one request that live in shared memory, by tensor name (plain objects: they cross threads). */
export interface TensorSharedMemory {
  readonly inputs: Readonly<Record<string, SharedMemoryReference>>;
  readonly outputs: Readonly<Record<string, SharedMemoryReference>>;
}

export const NO_SHARED_MEMORY: TensorSharedMemory = { inputs: {}, outputs: {} };

/** The value type a parameter must have: each frontend names it in its own words (JSON type, protobuf field). */
export type ParameterKind = "string" | "integer";

/**
 * Reads one parameter of a tensor: undefined when absent, its value when of `kind`; throws Triton's
 * "invalid value type" error otherwise.
 */
export type ParameterReader = (key: string, kind: ParameterKind) => string | number | undefined;

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/**
 * A tensor's `shared_memory_region`, `shared_memory_byte_size` and `shared_memory_offset` parameters (Triton's
 * ParseSharedMemoryParams, with its messages), or undefined when the tensor does not use shared memory.
 */
export function sharedMemoryReference(tensorName: string, read: ParameterReader): SharedMemoryReference | undefined {
  const region = read("shared_memory_region", "string") as string | undefined;
  const offset = read("shared_memory_offset", "integer") as number | undefined;
  const byteSize = read("shared_memory_byte_size", "integer") as number | undefined;
  for (const [key, value] of [["shared_memory_offset", offset], ["shared_memory_byte_size", byteSize]] as const) {
    if (value !== undefined && region === undefined) {
      throw invalid(`'${key}' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
    }
    if (value !== undefined && value < 0) throw invalid(`'${key}' of tensor '${tensorName}' must not be negative, got ${value}`);
  }
  if (region === undefined) return undefined;
  if (byteSize === undefined) {
    throw invalid(`'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${tensorName}'`);
  }
  return { region, offset: offset ?? 0, byteSize };
}

/** Triton refuses an output that asks for both. */
export function refuseSharedMemoryClassification(outputName: string): never {
  throw invalid(`output '${outputName}': output can't set both 'shared_memory_region' and 'classification'`);
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
export class SharedMemoryExchange {
  readonly #leases = new Map<string, SharedMemoryLease>();
  readonly #inputs: [string, SharedMemoryLease][] = [];
  readonly #outputs: [string, SharedMemoryReference, SharedMemoryLease][] = [];

  /** Leases every region the request names; throws (holding nothing) when one is missing or too small. */
  constructor(registry: SystemSharedMemory, tensors: TensorSharedMemory) {
    registry.admitInputBytes(Object.values(tensors.inputs).reduce((sum, reference) => sum + reference.byteSize, 0));
    try {
      for (const [name, reference] of Object.entries(tensors.inputs)) this.#inputs.push([name, this.#lease(registry, `input:${name}`, reference)]);
      for (const [name, reference] of Object.entries(tensors.outputs)) this.#outputs.push([name, reference, this.#lease(registry, `output:${name}`, reference)]);
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
        throw invalid(`shared memory size specified with the request for output '${name}' (${reference.byteSize} bytes) should be at least ${output.data.byteLength} bytes to hold the results`);
      }
      writes.push(lease.write(output.data));
      placed.set(name, { region: reference.region, byteSize: output.data.byteLength });
    }
    await Promise.all(writes);
    return placed;
  }

  release(): void {
    for (const lease of this.#leases.values()) lease.release();
    this.#leases.clear();
  }

  #lease(registry: SystemSharedMemory, key: string, reference: SharedMemoryReference): SharedMemoryLease {
    const lease = registry.lease(reference);
    this.#leases.set(key, lease);
    return lease;
  }
}

/** An answer and where its shared-memory outputs went. */
export interface SharedMemoryInferResult<Response> {
  readonly response: Response;
  readonly placed: ReadonlyMap<string, PlacedOutput>;
}

const NOTHING_PLACED: ReadonlyMap<string, PlacedOutput> = new Map();

/**
 * Runs `infer` with the request's shared-memory inputs read in and its shared-memory outputs written out after;
 * a request without shared memory goes straight through.
 */
export async function inferWithSharedMemory<Request extends { readonly inputs: readonly Tensor[] }>(
  registry: SystemSharedMemory, tensors: TensorSharedMemory, request: Request, infer: (request: Request) => Promise<InferResponse>,
): Promise<SharedMemoryInferResult<InferResponse>> {
  if (Object.keys(tensors.inputs).length === 0 && Object.keys(tensors.outputs).length === 0) {
    return { response: await infer(request), placed: NOTHING_PLACED };
  }
  const exchange = new SharedMemoryExchange(registry, tensors);
  try {
    const response = await infer({ ...request, inputs: await exchange.readInputs(request.inputs) });
    return { response, placed: await exchange.writeOutputs(response) };
  } finally {
    exchange.release();
  }
}
