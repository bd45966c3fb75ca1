import type { InferResult } from "./infer-result";
import type { CallOptions, InferRequest, PreparedInferRequest } from "./infer-types";
import type { ModelLoadOverrides } from "./model-load-overrides";
import type { GenerateResponse, GenerateStreamEvent, StreamedResponse } from "./stream-types";
import type { LogSettings, ModelConfig, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata } from "./kserve-types";

/**
 * The seam between {@link InferenceClient} and a wire protocol. A transport owns its connections, maps the
 * server's failures to `InferenceServerError` subclasses, and encodes/decodes tensors; callers hand it
 * validated requests only. Implementations must allow any number of concurrent calls.
 */
export interface ClientTransport {
  /** `"http"` (KServe v2 REST) or `"grpc"` (GRPCInferenceService). */
  readonly protocol: "http" | "grpc";
  /** Where the server is, for messages: a URL or host:port. */
  readonly target: string;

  serverLive(options?: CallOptions): Promise<boolean>;
  serverReady(options?: CallOptions): Promise<boolean>;
  serverMetadata(options?: CallOptions): Promise<ServerMetadata>;
  modelReady(model: string, version: string | undefined, options?: CallOptions): Promise<boolean>;
  modelMetadata(model: string, version: string | undefined, options?: CallOptions): Promise<ModelMetadata>;
  modelConfig(model: string, version: string | undefined, options?: CallOptions): Promise<ModelConfig>;
  /** Every model's statistics when `model` is undefined; every version's when `version` is. */
  modelStatistics(model: string | undefined, version: string | undefined, options?: CallOptions): Promise<ModelStatistics[]>;
  repositoryIndex(readyOnly: boolean, options?: CallOptions): Promise<RepositoryIndexEntry[]>;
  loadModel(model: string, overrides: ModelLoadOverrides, options?: CallOptions): Promise<void>;
  unloadModel(model: string, unloadDependents: boolean, options?: CallOptions): Promise<void>;
  /** Changes the settings `update` gives (undefined: only reads them) and answers all of them. */
  logSettings(update: Partial<LogSettings> | undefined, options?: CallOptions): Promise<LogSettings>;

  /** Encodes a request once; the result may be sent any number of times, concurrently. */
  prepareInfer(request: InferRequest): PreparedInferRequest;
  /** Sends a request this transport prepared. */
  infer(prepared: PreparedInferRequest, options?: CallOptions): Promise<InferResult>;

  /** Streams a prepared request's responses (gRPC ModelStreamInfer); absent on transports that cannot. */
  inferStream?(prepared: PreparedInferRequest, options?: CallOptions): AsyncIterable<StreamedResponse>;
  /** Triton's generate extension (HTTP only); absent on transports that lack it. */
  generate?(model: string, version: string | undefined, body: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<GenerateResponse>;
  generateStream?(model: string, version: string | undefined, body: Readonly<Record<string, unknown>>, options?: CallOptions): AsyncIterable<GenerateStreamEvent>;

  /** Closes idle connections and waits for in-flight calls; later calls reject. */
  close(): Promise<void>;
}
