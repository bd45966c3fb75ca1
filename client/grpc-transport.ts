import { existsSync } from "node:fs";
import path from "node:path";
import {
  type ChannelCredentials, type Client, credentials, makeGenericClientConstructor, Metadata, type MethodDefinition, type ServiceDefinition, type ServiceError, status,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { isDataType } from "../protocol/datatypes";
import { GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS } from "../protocol/grpc-loader-options";
import type { InferParameter } from "../protocol/grpc-types/longs-as-numbers/inference/InferParameter";
import type { LogSettingsRequest } from "../protocol/grpc-types/longs-as-numbers/inference/LogSettingsRequest";
import type { LogSettingsResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/LogSettingsResponse";
import type { ModelConfigRequest } from "../protocol/grpc-types/longs-as-numbers/inference/ModelConfigRequest";
import type { ModelConfigResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelConfigResponse";
import type { ModelInferRequest } from "../protocol/grpc-types/longs-as-numbers/inference/ModelInferRequest";
import type { ModelInferResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelInferResponse";
import type { ModelMetadataRequest } from "../protocol/grpc-types/longs-as-numbers/inference/ModelMetadataRequest";
import type { ModelMetadataResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelMetadataResponse";
import type { ModelReadyRequest } from "../protocol/grpc-types/longs-as-numbers/inference/ModelReadyRequest";
import type { ModelReadyResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelReadyResponse";
import type { ModelRepositoryParameter } from "../protocol/grpc-types/longs-as-numbers/inference/ModelRepositoryParameter";
import type { ModelStatisticsRequest } from "../protocol/grpc-types/longs-as-numbers/inference/ModelStatisticsRequest";
import type { ModelStatisticsResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelStatisticsResponse";
import type { ModelStreamInferResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ModelStreamInferResponse";
import type { RepositoryIndexRequest } from "../protocol/grpc-types/longs-as-numbers/inference/RepositoryIndexRequest";
import type { RepositoryIndexResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/RepositoryIndexResponse";
import type { RepositoryModelLoadRequest } from "../protocol/grpc-types/longs-as-numbers/inference/RepositoryModelLoadRequest";
import type { RepositoryModelUnloadRequest } from "../protocol/grpc-types/longs-as-numbers/inference/RepositoryModelUnloadRequest";
import type { ServerLiveResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ServerLiveResponse";
import type { ServerMetadataResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ServerMetadataResponse";
import type { ServerReadyResponse__Output } from "../protocol/grpc-types/longs-as-numbers/inference/ServerReadyResponse";
import { type ClientTls, nodeTlsOptions } from "./client-tls";
import type { ClientTransport } from "./client-transport";
import { errorFromGrpcStatus } from "./error-from-grpc-status";
import { InferResult } from "./infer-result";
import type { CallOptions, InferRequest, InferTiming, OutputTensor, ParameterValue, PreparedInferRequest } from "./infer-types";
import { InferenceServerError } from "./inference-server-error";
import { ResponseQueue } from "./response-queue";
import type { StreamedResponse } from "./stream-types";
import { loadConfigText, type ModelLoadOverrides } from "./model-load-overrides";
import type { LogSettings, ModelConfig, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata } from "./kserve-types";
import { bytesToTensorData, tensorDataToBytes } from "./tensor-data";

/** A received parameter map's values: InferParameter's, or LogSettingsResponse's SettingValue (another oneof). */
type GrpcParameter<Choice extends string> = { readonly parameter_choice?: Choice } & Readonly<Partial<Record<Choice, ParameterValue>>>;

let loadedService: ServiceDefinition | undefined;
/** The proto's oneof names, which decode as extra keys naming the field that is set (`oneofs: true`). */
let oneofNames: ReadonlySet<string> = new Set();

/** `inference.GRPCInferenceService` from the package's `protocol/proto`, found from source or compiled code. */
function inferenceService(): ServiceDefinition {
  if (loadedService !== undefined) return loadedService;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const protoDir = path.join(dir, "protocol", "proto");
    if (existsSync(path.join(protoDir, "grpc_service.proto"))) {
      const definition = loadSync(path.join(protoDir, "grpc_service.proto"), { ...GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS, includeDirs: [protoDir] });
      loadedService = definition["inference.GRPCInferenceService"] as ServiceDefinition;
      oneofNames = new Set(Object.values(definition).flatMap((entry) => {
        const type = (entry as { type?: { oneofDecl?: readonly { name: string }[] } }).type;
        return type?.oneofDecl?.map((oneof) => oneof.name) ?? [];
      }));
      return loadedService;
    }
    if (path.dirname(dir) === dir) throw new Error(`protocol/proto/grpc_service.proto not found above ${__dirname}`);
  }
}

function toGrpcParameters(parameters: Readonly<Record<string, ParameterValue>>): Record<string, InferParameter> {
  return Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key,
    typeof value === "string" ? { string_param: value }
      : typeof value === "boolean" ? { bool_param: value }
        : Number.isInteger(value) ? { int64_param: value } : { double_param: value }]));
}

function fromGrpcParameters<Choice extends string>(parameters: Readonly<Record<string, GrpcParameter<Choice>>>): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const [key, parameter] of Object.entries(parameters)) {
    const choice = parameter.parameter_choice;
    // The oneof's virtual field names a member that is set, so its value is never undefined.
    const value = choice === undefined ? undefined : parameter[choice];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * A model config as Triton's JSON has it: without unset fields (as {@link withoutNulls}) and the oneof keys protobuf decoding adds (`policy_choice`,
 * `scheduling_choice`...), which no config parser takes back, so a config read here can be sent to `loadModel`.
 */
function withoutOneofKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutOneofKeys);
  if (typeof value !== "object" || value === null || Buffer.isBuffer(value)) return value;
  // The key names the set field (a string); a parameter a user happened to name alike holds an object.
  const isOneofKey = (key: string, field: unknown): boolean => oneofNames.has(key) && typeof field === "string";
  return Object.fromEntries(Object.entries(value).filter(([k, v]) => v !== null && !isOneofKey(k, v)).map(([k, v]) => [k, withoutOneofKeys(v)]));
}

/** Unset message fields decode as null; the HTTP JSON leaves them out, and so does this. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== "object" || value === null || Buffer.isBuffer(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

export interface GrpcTransportOptions {
  /** `host:port` of the gRPC endpoint (Triton's default port is 8001). */
  readonly address: string;
  /** Default per-call timeout (a gRPC deadline); none by default. */
  readonly timeoutMs?: number;
  /** Metadata sent with every call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Largest message sent or received (default 2 GiB - 1, as the server's). */
  readonly maxMessageBytes?: number;
  /**
   * HTTP/2 receive window for responses, per stream and connection (default 8 MiB): at Node's 64 KiB, every 64 KiB
   * of a large output waits for a round trip.
   */
  readonly flowControlWindowBytes?: number;
  /** Connect over TLS (a server started with --grpc-use-ssl), with these CA and client certificate settings. */
  readonly tls?: ClientTls;
}

const DEFAULT_FLOW_CONTROL_WINDOW_BYTES = 8 * 1024 * 1024;

/** A ModelInferRequest serialized once by {@link GrpcTransport.prepareInfer}. */
class GrpcPreparedInfer implements PreparedInferRequest {
  #encodeCharged = false;

  constructor(readonly modelName: string, readonly modelVersion: string | undefined, readonly payload: Buffer, readonly encodeNs: number) {}

  /** The encode time on the first send, 0 on later ones: summed over all sends it is the real encoding cost. */
  chargeEncodeNs(): number {
    if (this.#encodeCharged) return 0;
    this.#encodeCharged = true;
    return this.encodeNs;
  }
}

const identity = (bytes: Buffer): Buffer => bytes;

const asBuffer = (pem: string | Buffer | undefined): Buffer | null => (pem === undefined ? null : Buffer.from(pem));

function channelCredentials(tls: ClientTls | undefined): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  const { rejectUnauthorized, checkServerIdentity } = nodeTlsOptions(tls);
  return credentials.createSsl(asBuffer(tls.ca), asBuffer(tls.key), asBuffer(tls.cert), {
    rejectUnauthorized, ...(checkServerIdentity === undefined ? {} : { checkServerIdentity }),
  });
}

/** The parameters of a load request as Triton's gRPC frontend takes them: `config` a string, `file:<path>` bytes. */
function grpcLoadParameters(overrides: ModelLoadOverrides): Record<string, ModelRepositoryParameter> {
  const parameters: Record<string, ModelRepositoryParameter> = {};
  const config = loadConfigText(overrides);
  if (config !== undefined) parameters["config"] = { string_param: config };
  for (const [file, contents] of Object.entries(overrides.files ?? {})) parameters[`file:${file}`] = { bytes_param: contents };
  return parameters;
}

/** A ModelInferResponse as a result; `timing` is given when decoding began and says how long each step took. */
function inferResultOf(response: ModelInferResponse__Output, timing: (decodeStartNs: bigint) => InferTiming, decodeStartNs: bigint): InferResult {
  if (response.raw_output_contents.length !== response.outputs.length) {
    throw new SyntaxError(`malformed ModelInferResponse: ${response.outputs.length} outputs but ${response.raw_output_contents.length} raw_output_contents`);
  }
  const outputs = response.outputs.map((output, index): OutputTensor => {
    if (!isDataType(output.datatype)) throw new SyntaxError(`malformed ModelInferResponse: output '${output.name}' has datatype '${output.datatype}'`);
    const bytes = response.raw_output_contents[index]!;
    const parameters = fromGrpcParameters(output.parameters);
    return {
      name: output.name, datatype: output.datatype, shape: output.shape,
      data: bytesToTensorData(output.datatype, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), output.name),
      ...(Object.keys(parameters).length === 0 ? {} : { parameters }),
    } as OutputTensor;
  });
  return new InferResult({
    modelName: response.model_name, modelVersion: response.model_version, id: response.id === "" ? undefined : response.id,
    parameters: fromGrpcParameters(response.parameters), outputs, timing: timing(decodeStartNs),
  });
}

/**
 * Triton's GRPCInferenceService over one @grpc/grpc-js channel (HTTP/2 multiplexes concurrent calls on it).
 * Tensors always travel as `raw_input_contents`/`raw_output_contents`, so tensor formats do not apply. Failed
 * calls become `InferenceServerError`s by status code.
 */
export class GrpcTransport implements ClientTransport {
  readonly protocol = "grpc";
  readonly target: string;
  readonly #client: Client;
  readonly #service: ServiceDefinition;
  readonly #options: GrpcTransportOptions;

  constructor(options: GrpcTransportOptions) {
    this.#service = inferenceService();
    this.#options = options;
    this.target = options.address;
    const maxBytes = options.maxMessageBytes ?? 2 ** 31 - 1;
    const Client = makeGenericClientConstructor(this.#service, "GRPCInferenceService");
    this.#client = new Client(options.address, channelCredentials(options.tls), {
      "grpc.max_receive_message_length": maxBytes, "grpc.max_send_message_length": maxBytes,
      "grpc-node.flow_control_window": options.flowControlWindowBytes ?? DEFAULT_FLOW_CONTROL_WINDOW_BYTES,
    });
  }

  async serverLive(options?: CallOptions): Promise<boolean> {
    return (await this.#call<object, ServerLiveResponse__Output>("ServerLive", {}, options)).live;
  }

  async serverReady(options?: CallOptions): Promise<boolean> {
    return (await this.#call<object, ServerReadyResponse__Output>("ServerReady", {}, options)).ready;
  }

  serverMetadata(options?: CallOptions): Promise<ServerMetadata> {
    return this.#call<object, ServerMetadataResponse__Output>("ServerMetadata", {}, options);
  }

  async modelReady(model: string, version: string | undefined, options?: CallOptions): Promise<boolean> {
    return (await this.#call<ModelReadyRequest, ModelReadyResponse__Output>("ModelReady", { name: model, version: version ?? "" }, options)).ready;
  }

  async modelMetadata(model: string, version: string | undefined, options?: CallOptions): Promise<ModelMetadata> {
    // The server writes the datatypes its models declare, which are the protocol's.
    return await this.#call<ModelMetadataRequest, ModelMetadataResponse__Output>("ModelMetadata", { name: model, version: version ?? "" }, options) as ModelMetadata;
  }

  async modelConfig(model: string, version: string | undefined, options?: CallOptions): Promise<ModelConfig> {
    const { config } = await this.#call<ModelConfigRequest, ModelConfigResponse__Output>("ModelConfig", { name: model, version: version ?? "" }, options);
    return withoutOneofKeys(config) as ModelConfig;
  }

  async modelStatistics(model: string | undefined, version: string | undefined, options?: CallOptions): Promise<ModelStatistics[]> {
    const response = await this.#call<ModelStatisticsRequest, ModelStatisticsResponse__Output>(
      "ModelStatistics", { name: model ?? "", version: version ?? "" }, options,
    );
    return withoutNulls(response.model_stats) as ModelStatistics[];
  }

  async repositoryIndex(readyOnly: boolean, options?: CallOptions): Promise<RepositoryIndexEntry[]> {
    const response = await this.#call<RepositoryIndexRequest, RepositoryIndexResponse__Output>("RepositoryIndex", { repository_name: "", ready: readyOnly }, options);
    // An empty version means "not loaded", which the HTTP index says by leaving the field out.
    return response.models.map(({ version, ...entry }): RepositoryIndexEntry => (version === "" ? entry : { ...entry, version }));
  }

  async loadModel(model: string, overrides: ModelLoadOverrides, options?: CallOptions): Promise<void> {
    await this.#call<RepositoryModelLoadRequest, unknown>("RepositoryModelLoad", { repository_name: "", model_name: model, parameters: grpcLoadParameters(overrides) }, options);
  }

  async unloadModel(model: string, unloadDependents: boolean, options?: CallOptions): Promise<void> {
    const parameters: Record<string, ModelRepositoryParameter> = unloadDependents ? { unload_dependents: { bool_param: true } } : {};
    await this.#call<RepositoryModelUnloadRequest, unknown>("RepositoryModelUnload", { repository_name: "", model_name: model, parameters }, options);
  }

  async logSettings(update: Partial<LogSettings> | undefined, options?: CallOptions): Promise<LogSettings> {
    // As tritonclient: booleans travel as bool_param, numbers as uint32_param, strings as string_param.
    const settings: LogSettingsRequest["settings"] = Object.fromEntries(Object.entries(update ?? {}).map(([name, value]) =>
      [name, typeof value === "boolean" ? { bool_param: value } : typeof value === "number" ? { uint32_param: value } : { string_param: value }]));
    const response = await this.#call<LogSettingsRequest, LogSettingsResponse__Output>("LogSettings", { settings }, options);
    return fromGrpcParameters(response.settings) as unknown as LogSettings;
  }

  prepareInfer(request: InferRequest): PreparedInferRequest {
    const start = process.hrtime.bigint();
    const message: ModelInferRequest = {
      model_name: request.modelName,
      model_version: request.modelVersion ?? "",
      id: request.id ?? "",
      parameters: toGrpcParameters(request.parameters),
      inputs: request.inputs.map((input) => ({ name: input.name, datatype: input.datatype, shape: [...input.shape], parameters: toGrpcParameters(input.parameters) })),
      outputs: (request.outputs ?? []).map((output) => {
        const parameters: Record<string, InferParameter> = output.classification === undefined ? {} : { classification: { int64_param: output.classification } };
        return { name: output.name, parameters };
      }),
      raw_input_contents: request.inputs.map((input) => {
        const bytes = tensorDataToBytes(input.datatype, input.data);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }),
    };
    const payload = this.#method("ModelInfer").requestSerialize(message);
    return new GrpcPreparedInfer(request.modelName, request.modelVersion, payload, Number(process.hrtime.bigint() - start));
  }

  async infer(prepared: PreparedInferRequest, options?: CallOptions): Promise<InferResult> {
    if (!(prepared instanceof GrpcPreparedInfer)) throw new TypeError("this request was prepared by another transport");
    const method = this.#method("ModelInfer");
    const sentAt = process.hrtime.bigint();
    // Sent pre-serialized, received raw: decoding is timed as the receive step.
    const raw = await this.#unary<Buffer>(method.path, identity, identity, prepared.payload, options);
    const receivedAt = process.hrtime.bigint();
    const response = method.responseDeserialize(raw) as ModelInferResponse__Output;
    return inferResultOf(response, (decodeStartNs) => ({
      sendNs: prepared.chargeEncodeNs(), responseWaitNs: Number(receivedAt - sentAt), receiveNs: Number(process.hrtime.bigint() - decodeStartNs),
    }), receivedAt);
  }

  /**
   * Sends a prepared request on its own ModelStreamInfer call and yields each response as it comes: all of a
   * decoupled model's, the one of any other model. The iteration ends after the response marked
   * `triton_final_response` (an empty final response is not yielded); stopping it early cancels the call.
   */
  inferStream(prepared: PreparedInferRequest, options?: CallOptions): AsyncIterable<StreamedResponse> {
    if (!(prepared instanceof GrpcPreparedInfer)) throw new TypeError("this request was prepared by another transport");
    const method = this.#method("ModelStreamInfer");
    const metadata = new Metadata();
    for (const [key, value] of Object.entries({ ...this.#options.headers, ...options?.headers })) metadata.set(key, value);
    const timeoutMs = options?.timeoutMs ?? this.#options.timeoutMs;
    const call = this.#client.makeBidiStreamRequest(
      method.path, identity as (value: unknown) => Buffer, method.responseDeserialize, metadata, timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs },
    );
    const queue = new ResponseQueue<StreamedResponse>(() => call.cancel());
    const onAbort = (): void => {
      queue.fail(options?.signal?.reason);
      call.cancel();
    };
    options?.signal?.addEventListener("abort", onAbort, { once: true });
    let sentAt = process.hrtime.bigint();
    call.on("data", (message: ModelStreamInferResponse__Output) => {
      const receivedAt = process.hrtime.bigint();
      const response = message.infer_response;
      // As inferResultOf does for a response it cannot read: every server sets it, if only to carry an error's id.
      if (response === null) throw new SyntaxError("malformed ModelStreamInferResponse: no infer_response");
      const final = response.parameters?.["triton_final_response"]?.bool_param === true;
      if (message.error_message !== "") {
        queue.push({ error: new InferenceServerError("UNKNOWN", message.error_message) });
      } else if (!(final && response.outputs.length === 0)) {
        const waitNs = Number(receivedAt - sentAt);
        queue.push({ result: inferResultOf(response, (decodeStartNs) => ({ sendNs: 0, responseWaitNs: waitNs, receiveNs: Number(process.hrtime.bigint() - decodeStartNs) }), receivedAt) });
      }
      sentAt = receivedAt;
      if (final) queue.end();
    });
    call.on("error", (error: ServiceError) => queue.fail(errorFromGrpcStatus(error, this.target)));
    call.on("end", () => queue.end());
    call.on("close", () => options?.signal?.removeEventListener("abort", onAbort));
    prepared.chargeEncodeNs();
    call.write(prepared.payload);
    call.end();
    return queue;
  }

  close(): Promise<void> {
    this.#client.close();
    return Promise.resolve();
  }

  #method(rpc: string): MethodDefinition<object, unknown> {
    return this.#service[rpc] as MethodDefinition<object, unknown>;
  }

  /** `Response` is the generated `__Output` type of the RPC's response, as the loader options above decode it. */
  #call<Request extends object, Response>(rpc: string, request: Request, options?: CallOptions): Promise<Response> {
    const method = this.#method(rpc);
    return this.#unary(method.path, method.requestSerialize, method.responseDeserialize, request, options);
  }

  #unary<Response>(
    methodPath: string, serialize: (value: never) => Buffer, deserialize: (bytes: Buffer) => unknown, request: unknown, options?: CallOptions,
  ): Promise<Response> {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries({ ...this.#options.headers, ...options?.headers })) metadata.set(key, value);
    const timeoutMs = options?.timeoutMs ?? this.#options.timeoutMs;
    const signal = options?.signal;
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      const call = this.#client.makeUnaryRequest(
        methodPath, serialize as (value: unknown) => Buffer, deserialize, request, metadata,
        timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs },
        (error: ServiceError | null, response?: unknown) => {
          signal?.removeEventListener("abort", cancel);
          if (error === null) resolve(response as Response);
          else if (error.code === status.CANCELLED && signal?.aborted === true) reject(signal.reason);
          else reject(errorFromGrpcStatus(error, this.target));
        },
      );
      const cancel = (): void => call.cancel();
      signal?.addEventListener("abort", cancel, { once: true });
    });
  }
}
