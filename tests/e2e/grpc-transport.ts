import path from "node:path";
import {
  type CallOptions, type ChannelCredentials, type ClientDuplexStream, credentials, makeGenericClientConstructor, Metadata, type MethodDefinition,
  type ServiceDefinition, status,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { DataType, ErrorCode } from "../../server/core/index";
import { REPO_ROOT } from "../helpers/server-process";
import { tensorBytes, tensorValues } from "./http-transport";
import { type CaseRequest, type CaseResult, type CaseTensor, isRawTensor, type ProtocolTransport } from "./protocol-transport";

export const PROTO_DIRECTORY = path.join(REPO_ROOT, "protocol", "proto");

/** As a Triton client decodes: 64-bit integers as exact decimal strings, enums by name, defaults filled. */
const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIRECTORY] };

export type GrpcMessage = Record<string, unknown>;

/** An error the server answered with: the gRPC status and its message. */
export class GrpcCallError extends Error {
  constructor(readonly code: status, readonly details: string) {
    super(`${status[code]}: ${details}`);
  }
}

/** The error status a call failed with; throws if it succeeded or failed some other way. */
export async function grpcCallError(call: Promise<unknown>): Promise<GrpcCallError> {
  const error = await call.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof GrpcCallError)) throw new Error(`expected the call to fail with a gRPC status, got ${String(error)}`);
  return error;
}

/** A plain @grpc/grpc-js client for our protos, for tests: unary calls as promises, ModelStreamInfer as a stream. */
export class GrpcTestClient {
  readonly #inference: ServiceDefinition;
  readonly #health: ServiceDefinition;
  readonly #client;

  constructor(address: string, channelOptions: Record<string, number> = {}, channelCredentials: ChannelCredentials = credentials.createInsecure()) {
    const definition = loadSync([path.join(PROTO_DIRECTORY, "grpc_service.proto"), path.join(PROTO_DIRECTORY, "health.proto")], LOADER_OPTIONS);
    this.#inference = definition["inference.GRPCInferenceService"] as ServiceDefinition;
    this.#health = definition["grpc.health.v1.Health"] as ServiceDefinition;
    const Client = makeGenericClientConstructor(this.#inference, "GRPCInferenceService");
    this.#client = new Client(address, channelCredentials, channelOptions);
  }

  #method(name: string): MethodDefinition<GrpcMessage, GrpcMessage> {
    const method = (this.#inference[name] ?? this.#health[name]) as MethodDefinition<GrpcMessage, GrpcMessage> | undefined;
    if (method === undefined) throw new Error(`no RPC named ${name}`);
    return method;
  }

  /**
   * Calls a unary RPC of GRPCInferenceService (or Health's `Check`), with optional metadata; rejects with
   * {@link GrpcCallError}. Aborting `signal` cancels the call.
   */
  unary<Response = GrpcMessage>(rpc: string, request: GrpcMessage, options: CallOptions = {}, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    const method = this.#method(rpc);
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return new Promise((resolve, reject) => {
      const call = this.#client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, request, metadata, options, (error, response) => {
        if (error) reject(new GrpcCallError(error.code, error.details));
        else resolve(response as Response);
      });
      signal?.addEventListener("abort", () => call.cancel(), { once: true });
    });
  }

  /** Opens ModelStreamInfer, with optional request headers (e.g. `triton_grpc_error`). */
  modelStreamInfer(headers: Record<string, string> = {}): ClientDuplexStream<GrpcMessage, GrpcMessage> {
    const method = this.#method("ModelStreamInfer");
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return this.#client.makeBidiStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, metadata);
  }

  close(): void {
    this.#client.close();
  }
}

/** Writes `requests` on a ModelStreamInfer call, half-closes it, and reads every response until the server ends it; rejects with its error status. */
export function streamResponses(stream: ReturnType<GrpcTestClient["modelStreamInfer"]>, requests: readonly GrpcMessage[]): Promise<GrpcMessage[]> {
  const responses: GrpcMessage[] = [];
  return new Promise((resolve, reject) => {
    stream.on("data", (response: GrpcMessage) => responses.push(response));
    stream.on("error", (error: Error & { code: status; details: string }) => reject(new GrpcCallError(error.code, error.details)));
    stream.on("end", () => resolve(responses));
    for (const request of requests) stream.write(request);
    stream.end();
  });
}

const CODE_BY_STATUS: Partial<Record<status, ErrorCode>> = {
  [status.INVALID_ARGUMENT]: "INVALID_ARG", [status.NOT_FOUND]: "NOT_FOUND", [status.UNAVAILABLE]: "UNAVAILABLE",
  [status.UNIMPLEMENTED]: "UNSUPPORTED", [status.INTERNAL]: "INTERNAL", [status.ALREADY_EXISTS]: "ALREADY_EXISTS",
  [status.CANCELLED]: "CANCELLED",
};

/** The typed `InferTensorContents` field a Triton client fills for each datatype; FP16/BF16 have none. */
function typedContents(tensor: CaseTensor): GrpcMessage {
  const numbers = (): number[] => tensor.values.map(Number);
  const texts = (): string[] => tensor.values.map((v) => String(v));
  switch (tensor.datatype) {
    case "BOOL": return { bool_contents: tensor.values.map(Boolean) };
    case "INT8": case "INT16": case "INT32": return { int_contents: numbers() };
    case "INT64": return { int64_contents: texts() };
    case "UINT8": case "UINT16": case "UINT32": return { uint_contents: numbers() };
    case "UINT64": return { uint64_contents: texts() };
    case "FP32": return { fp32_contents: numbers() };
    case "FP64": return { fp64_contents: numbers() };
    case "BYTES": return { bytes_contents: texts().map((t) => Buffer.from(t)) };
    default: return {};
  }
}

function inferParameter(value: number | string | boolean): GrpcMessage {
  if (typeof value === "boolean") return { bool_param: value };
  if (typeof value === "string") return { string_param: value };
  return Number.isInteger(value) ? { int64_param: String(value) } : { double_param: value };
}

/** A case request as a `ModelInferRequest`, tensors as typed `contents` or as `raw_input_contents`. */
export function modelInferRequest(request: CaseRequest, raw: boolean): GrpcMessage {
  const rawContents: Buffer[] = [];
  const inputs = request.inputs.map((tensor) => {
    const head = { name: tensor.name, datatype: tensor.datatype, shape: [...tensor.shape] };
    if (raw) {
      const bytes = isRawTensor(tensor) ? tensor.raw : tensorBytes(tensor.datatype, tensor.values);
      rawContents.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return head;
    }
    if (isRawTensor(tensor)) throw new Error("raw tensors need raw_input_contents");
    return { ...head, contents: typedContents(tensor) };
  });
  return {
    model_name: request.model,
    model_version: request.version ?? "",
    id: request.id ?? "",
    parameters: Object.fromEntries(Object.entries(request.parameters ?? {}).map(([k, v]) => [k, inferParameter(v)])),
    inputs,
    outputs: (request.outputs ?? []).map((o) => ({
      name: o.name,
      parameters: o.classification === undefined ? {} : { classification: { int64_param: String(o.classification) } },
    })),
    raw_input_contents: rawContents,
  };
}

interface DecodedInferResponse {
  outputs: { name: string; datatype: DataType; shape: string[] }[];
  raw_output_contents: Buffer[];
}

/** A `ModelInferResponse` -> case outputs; the server must answer every output in `raw_output_contents`. */
export function caseOutputs(response: GrpcMessage): CaseTensor[] {
  const decoded = response as unknown as DecodedInferResponse;
  if (decoded.raw_output_contents.length !== decoded.outputs.length) {
    throw new Error(`${decoded.outputs.length} outputs but ${decoded.raw_output_contents.length} raw_output_contents`);
  }
  return decoded.outputs.map((output, i) => ({
    name: output.name, datatype: output.datatype, shape: output.shape.map(Number),
    values: tensorValues(output.datatype, decoded.raw_output_contents[i]!),
  }));
}

/** Sends cases through ModelInfer, as a Triton client would: typed `contents` ("grpc-typed") or raw ("grpc-raw"). */
export function grpcTransport(client: GrpcTestClient, raw: boolean): ProtocolTransport {
  return {
    name: raw ? "grpc-raw" : "grpc-typed",
    binary: raw,
    async infer(request: CaseRequest): Promise<CaseResult> {
      try {
        return { kind: "ok", outputs: caseOutputs(await client.unary("ModelInfer", modelInferRequest(request, raw))) };
      } catch (error) {
        if (!(error instanceof GrpcCallError)) throw error;
        return { kind: "error", code: CODE_BY_STATUS[error.code] ?? "UNKNOWN", message: error.details };
      }
    },
  };
}
