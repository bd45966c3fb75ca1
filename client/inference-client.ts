import type { ClientTransport } from "./client-transport";
import { GrpcTransport, type GrpcTransportOptions } from "./grpc-transport";
import { HttpTransport, type HttpTransportOptions } from "./http-transport";
import type { InferResult } from "./infer-result";
import type {
  CallOptions, InferInput, InferOptions, InferRequest, InputTensor, OutputSelection, PreparedInferRequest, TensorFormat,
} from "./infer-types";
import type { ModelLoadOverrides } from "./model-load-overrides";
import type { LogSettings, ModelConfig, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata } from "./kserve-types";
import { UnsupportedError } from "./inference-server-error";
import type { GenerateResponse, GenerateStreamEvent, StreamedResponse } from "./stream-types";
import { DATATYPES, type DataType, ELEMENT_BYTE_SIZE } from "../protocol/datatypes";
import { elementCountOf, inferDataType, toTensorData } from "./tensor-data";

/**
 * Connection settings. `maxConnections`, `keepAliveTimeoutMs` and `compression` apply to HTTP only,
 * `maxMessageBytes` and `flowControlWindowBytes` to gRPC only; `timeoutMs`, `headers` and `tls` to both.
 */
export interface InferenceClientOptions extends Omit<HttpTransportOptions, "url">, Pick<GrpcTransportOptions, "maxMessageBytes" | "flowControlWindowBytes"> {
  /**
   * The server: `http://host:8000` for KServe v2 REST, `grpc://host:8001` for Triton's gRPC service; `https://` and
   * `grpcs://` for the same over TLS (see `tls`). Ignored when `transport` is given.
   */
  readonly url?: string;
  /** A ready-made transport (a gRPC one, or a test double) instead of HTTP to `url`. */
  readonly transport?: ClientTransport;
  /** Default format for inputs (default `binary`, as perf_analyzer and tritonclient do). */
  readonly inputFormat?: TensorFormat;
  /** Default format for outputs (default `binary`). */
  readonly outputFormat?: TensorFormat;
}

/** Options of calls about one model. */
export interface ModelCallOptions extends CallOptions {
  /** Model version; the server's choice (all versions, for statistics) when absent. */
  readonly version?: string;
}

/**
 * When the data holds exactly 2, 4 or 8 times the elements, most likely its values are of a wider datatype
 * reinterpreted as this one (FP32 bytes viewed as FP16 bit patterns): say so, not only that the counts differ.
 */
function datatypeSizeHint(datatype: DataType, actual: number, expected: number): string {
  const size = ELEMENT_BYTE_SIZE[datatype];
  const factor = actual / expected;
  if (size === 0 || ![2, 4, 8].includes(factor) || size * factor > 8) return "";
  const family = (type: DataType): string => (type === "BF16" ? "FP" : type.replace(/\d+$/, ""));
  const wider = DATATYPES.filter((candidate) => ELEMENT_BYTE_SIZE[candidate] === size * factor && family(candidate) === family(datatype));
  const named = wider.length > 0 ? wider.join("/") : `${size * factor}-byte`;
  return `: that is the byte size of ${expected} ${named} elements - a datatype mismatch? The input is ${datatype} (${size} bytes per element); `
    + `convert the values to ${datatype}, or name the datatype the data really has`;
}

function buildInput(input: InferInput, format: TensorFormat): InputTensor {
  const datatype = input.datatype ?? inferDataType(input.data);
  if (datatype === undefined) {
    throw new TypeError(`input '${input.name}': give a datatype, it cannot be told from ${Array.isArray(input.data) ? "a plain array" : "this data"}`);
  }
  const data = toTensorData(datatype, input.data, input.name);
  const expected = elementCountOf(input.shape);
  if (data.length !== expected) {
    const sizes = `shape [${input.shape.join(",")}] holds ${expected} elements, the data has ${data.length}`;
    throw new RangeError(`input '${input.name}': ${sizes}${datatypeSizeHint(datatype, data.length, expected)}`);
  }
  return { name: input.name, datatype, shape: [...input.shape], data, format, parameters: input.parameters ?? {} };
}

/**
 * A typed client for a KServe v2 / Triton inference server, over HTTP or gRPC: health, metadata, config,
 * statistics, repository control and inference with typed arrays in and out. Connections are pooled and kept
 * alive (HTTP) or multiplexed on one channel (gRPC); one client is meant
 * to be shared by the whole process and closed at the end. Server errors reject with `InferenceServerError`
 * subclasses; inputs that cannot be encoded throw `TypeError`/`RangeError` before anything is sent.
 *
 * @example
 * const client = new InferenceClient({ url: "http://127.0.0.1:8000" });
 * const result = await client.infer("simple", [
 *   { name: "INPUT0", shape: [1, 16], data: new Int32Array(16).fill(1) },
 *   { name: "INPUT1", shape: [1, 16], data: new Int32Array(16).fill(2) },
 * ]);
 * result.data("OUTPUT0", "INT32"); // Int32Array [3, 3, ...]
 */
export class InferenceClient {
  readonly #transport: ClientTransport;
  readonly #inputFormat: TensorFormat;
  readonly #outputFormat: TensorFormat;

  constructor(options: InferenceClientOptions) {
    if (options.transport !== undefined) {
      this.#transport = options.transport;
    } else if (options.url !== undefined) {
      const url = new URL(options.url);
      const grpc = url.protocol === "grpc:" || url.protocol === "grpcs:";
      this.#transport = grpc
        ? new GrpcTransport({
          address: url.host, timeoutMs: options.timeoutMs, headers: options.headers,
          maxMessageBytes: options.maxMessageBytes, flowControlWindowBytes: options.flowControlWindowBytes,
          tls: url.protocol === "grpcs:" ? options.tls ?? {} : undefined,
        })
        : new HttpTransport({ ...options, url: options.url });
    } else {
      throw new TypeError("InferenceClient needs a url or a transport");
    }
    this.#inputFormat = options.inputFormat ?? "binary";
    this.#outputFormat = options.outputFormat ?? "binary";
  }

  /** `"http"` or `"grpc"`. */
  get protocol(): ClientTransport["protocol"] {
    return this.#transport.protocol;
  }

  /** The server's address, as given. */
  get target(): string {
    return this.#transport.target;
  }

  isServerLive(options?: CallOptions): Promise<boolean> {
    return this.#transport.serverLive(options);
  }

  isServerReady(options?: CallOptions): Promise<boolean> {
    return this.#transport.serverReady(options);
  }

  serverMetadata(options?: CallOptions): Promise<ServerMetadata> {
    return this.#transport.serverMetadata(options);
  }

  /** False for a model that is loading, unloaded, failed or unknown. */
  isModelReady(model: string, options?: ModelCallOptions): Promise<boolean> {
    return this.#transport.modelReady(model, options?.version, options);
  }

  modelMetadata(model: string, options?: ModelCallOptions): Promise<ModelMetadata> {
    return this.#transport.modelMetadata(model, options?.version, options);
  }

  modelConfig(model: string, options?: ModelCallOptions): Promise<ModelConfig> {
    return this.#transport.modelConfig(model, options?.version, options);
  }

  /** Statistics extension: cumulative counters of one model (all its versions unless `version`), or of all models. */
  modelStatistics(model?: string, options?: ModelCallOptions): Promise<ModelStatistics[]> {
    return this.#transport.modelStatistics(model, options?.version, options);
  }

  /** Every model in the repository with its state; only ready ones when `readyOnly`. */
  repositoryIndex(options?: CallOptions & { readonly readyOnly?: boolean }): Promise<RepositoryIndexEntry[]> {
    return this.#transport.repositoryIndex(options?.readyOnly ?? false, options);
  }

  /**
   * Loads (or reloads) a model; the server must run with `--model-control-mode explicit`. With `config` (and
   * `files`) the model is loaded from them instead of its repository files, as tritonclient's `load_model`.
   */
  loadModel(model: string, options?: CallOptions & ModelLoadOverrides): Promise<void> {
    return this.#transport.loadModel(model, { config: options?.config, files: options?.files }, options);
  }

  /** Unloads a model; with `unloadDependents`, the ensembles that use it too (tritonclient's `unload_dependents`). */
  unloadModel(model: string, options?: CallOptions & { readonly unloadDependents?: boolean }): Promise<void> {
    return this.#transport.unloadModel(model, options?.unloadDependents ?? false, options);
  }

  /** Logging extension: the server's log settings (tritonclient's `get_log_settings`). */
  getLogSettings(options?: CallOptions): Promise<LogSettings> {
    return this.#transport.logSettings(undefined, options);
  }

  /**
   * Logging extension: changes the settings given and answers all of them (tritonclient's `update_log_settings`).
   * A refused update (a wrong type or value, a new `log_file`) changes nothing.
   */
  updateLogSettings(settings: Partial<LogSettings>, options?: CallOptions): Promise<LogSettings> {
    return this.#transport.logSettings(settings, options);
  }

  /** Runs one inference. */
  infer(model: string, inputs: readonly InferInput[], options?: InferOptions): Promise<InferResult> {
    return this.#transport.infer(this.prepareInfer(model, inputs, options), options);
  }

  /**
   * Validates and encodes a request once, for sending many times with {@link inferPrepared} (load generation,
   * retries). Throws `TypeError`/`RangeError` for inputs that do not match their shape or datatype.
   */
  prepareInfer(model: string, inputs: readonly InferInput[], options?: InferOptions): PreparedInferRequest {
    const inputFormat = options?.inputFormat ?? this.#inputFormat;
    const outputFormat = options?.outputFormat ?? this.#outputFormat;
    const outputs = options?.outputs?.map((output): OutputSelection => typeof output === "string"
      ? { name: output, format: outputFormat, classification: undefined }
      : { name: output.name, format: output.format ?? outputFormat, classification: output.classification });
    const request: InferRequest = {
      modelName: model,
      modelVersion: options?.modelVersion,
      id: options?.id,
      parameters: options?.parameters ?? {},
      inputs: inputs.map((input) => buildInput(input, inputFormat)),
      outputs,
      outputFormat,
    };
    return this.#transport.prepareInfer(request);
  }

  /** Sends a request made by {@link prepareInfer} on this client. */
  inferPrepared(prepared: PreparedInferRequest, options?: CallOptions): Promise<InferResult> {
    return this.#transport.infer(prepared, options);
  }

  /**
   * Runs one inference and yields its responses as the server streams them (gRPC ModelStreamInfer, one call per
   * request): a decoupled model's zero or more, any other model's one. Ends after the final response; breaking out
   * of the loop cancels the request. Needs a gRPC client; over HTTP use {@link generateStream}.
   */
  inferStream(model: string, inputs: readonly InferInput[], options?: InferOptions): AsyncIterable<StreamedResponse> {
    const transport = this.#transport;
    if (transport.inferStream === undefined) throw new UnsupportedError(`streaming inference needs gRPC; over ${transport.protocol} use generateStream()`);
    return transport.inferStream(this.prepareInfer(model, inputs, options), options);
  }

  /** Triton's generate extension: `body` maps input names to values (one element or a flat array) and other keys to parameters. */
  generate(model: string, body: Readonly<Record<string, unknown>>, options?: ModelCallOptions): Promise<GenerateResponse> {
    const transport = this.#transport;
    if (transport.generate === undefined) throw new UnsupportedError(`the generate extension is HTTP only, not ${transport.protocol}`);
    return transport.generate(model, options?.version, body, options);
  }

  /** Triton's `/generate_stream`: each server-sent event as it arrives; breaking out of the loop cancels the request. */
  generateStream(model: string, body: Readonly<Record<string, unknown>>, options?: ModelCallOptions): AsyncIterable<GenerateStreamEvent> {
    const transport = this.#transport;
    if (transport.generateStream === undefined) throw new UnsupportedError(`the generate extension is HTTP only, not ${transport.protocol}`);
    return transport.generateStream(model, options?.version, body, options);
  }

  /** Closes the connections; calls made afterwards reject. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
