import type { FailureReason, RequestOutcome } from "./core-observer";
import { asInferenceError, InferenceError, invalidArg } from "./errors";
import { fullShape } from "./model-config/model-signature";
import type { DataType } from "../../protocol/datatypes";
import type { InferenceTrace, InferRequest, InferResponse, OutputTensor, ParameterValue } from "./request/inference-request";
import { classify } from "./request/classification";
import type { ModelVersion } from "./repository/model-version";
import { type RequestLimits, validateRequest } from "./request/request-validation";
import { ResponseCache } from "./request/response-cache";
import { ResponseStream, type StreamListener } from "./request/response-stream";
import { RequestTimes } from "./request/request-times";
import { ResponseTiming } from "./request/response-timing";

/** A model's inputs as its config declares them, for a raw binary request (the whole body is the one input). */
export interface ModelInputs {
  readonly name: string;
  readonly batching: boolean;
  /** `dims` without the batch dimension. */
  readonly inputs: readonly { readonly name: string; readonly datatype: DataType; readonly dims: readonly number[] }[];
}

/** A tensor as model metadata describes it: the full shape, a leading -1 when the model batches. */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
}

/** What a handle needs of the core that resolved it. */
export interface HandleContext {
  /** Whether the server refuses new work (it is shutting down). */
  shuttingDown(): boolean;
  readonly requestLimits: RequestLimits;
  /** Most responses one stream may have written while its client is blocked (`--max-stream-backlog`). */
  readonly streamBacklog: number;
  /** Where a decoupled model's stream is kept until it ends (a shutdown past its deadline ends those left). */
  readonly openStreams: Set<ResponseStream>;
  /** The response cache, for a model whose config enables it, when the server has one. */
  cacheFor(model: ModelVersion): ResponseCache | undefined;
  /** Whether anything listens to {@link report}: without observers no outcome is built. */
  observed(): boolean;
  report(outcome: RequestOutcome): void;
}

/** A cached model's request: its key, the lookup's share of its time, and, once known, the cache's outcome. */
interface CacheUse {
  readonly cache: ResponseCache;
  readonly key: string;
  readonly lookupNs: number;
  outcome?: { readonly hit: boolean; readonly ns: number };
}

const NOT_ONE_RESPONSE = "expected exactly one response from a model that is not decoupled";

function integerParameter(parameters: InferRequest["parameters"], key: string): number | undefined {
  const value: ParameterValue | undefined = parameters?.[key];
  if (value === undefined) return undefined;
  const number = typeof value === "bigint" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 0) {
    throw invalidArg(`request parameter '${key}' must be a non-negative integer, got ${JSON.stringify(String(value))}`);
  }
  return number;
}

function failureReasonOf(error: InferenceError): FailureReason {
  if (error.code === "CANCELLED") return "CANCELED";
  if (error.code === "UNAVAILABLE") return "REJECTED";
  if (error.code === "INTERNAL") return "BACKEND";
  return "OTHER";
}

/**
 * One resolved model version, as a frontend holds it for one request (Triton's model handle with its request
 * object): resolved once, by {@link InferenceCore.model}, then asked for what the request needs and run with
 * {@link stream}, the one request path for every kind of model. A handle is not kept across requests: a reload
 * replaces the version it points at, which then drains.
 */
export class ModelHandle {
  readonly #model: ModelVersion;
  readonly #context: HandleContext;

  constructor(model: ModelVersion, context: HandleContext) {
    this.#model = model;
    this.#context = context;
  }

  get name(): string {
    return this.#model.name;
  }

  get version(): string {
    return String(this.#model.version);
  }

  /** Whether the model answers a request with any number of responses (`model_transaction_policy { decoupled: true }`). */
  get decoupled(): boolean {
    return this.#model.config.model_transaction_policy?.decoupled === true;
  }

  /** The platform (or backend) model metadata names. */
  get platform(): string {
    return this.#model.config.platform || this.#model.config.backend;
  }

  /** Instances serving the model (none for an ensemble). */
  get instanceCount(): number {
    return this.#model.placements.length;
  }

  /** Instances executing now. */
  busyInstances(): number {
    return this.#model.pool.busyCount;
  }

  /** Whether responses share their outputs with the response cache (a caller that changes them must copy). */
  get sharesOutputs(): boolean {
    return this.#context.cacheFor(this.#model) !== undefined;
  }

  /** The model's inputs and outputs as model metadata lists them. */
  tensors(): { readonly inputs: TensorMetadata[]; readonly outputs: TensorMetadata[] } {
    const { signature } = this.#model;
    const describe = (tensors: typeof signature.inputs): TensorMetadata[] => tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: fullShape(signature, t) }));
    return { inputs: describe(signature.inputs), outputs: describe(signature.outputs) };
  }

  /** The model's inputs as its config declares them, for a raw binary request. */
  inputs(): ModelInputs {
    const { signature } = this.#model;
    return { name: this.name, batching: signature.maxBatchSize > 0, inputs: signature.inputs.map((t) => ({ name: t.name, datatype: t.datatype, dims: t.dims })) };
  }

  /**
   * The request path: validates the request, answers it from the response cache or queues it in the model's
   * scheduler, and hands its responses to `listener` as they come, the last one marked final (Triton's response
   * callback with TRITONSERVER_RESPONSE_COMPLETE_FINAL): a decoupled model's zero or more responses, then the final
   * flag; any other model's one response, final. A failure is an error response, final. `request.signal` cancels
   * the request. The request's times (received, queued, computed, ended) are recorded on it; statistics,
   * metrics and its trace read them once it is over. Never throws.
   */
  stream(request: InferRequest, listener: StreamListener): void {
    const model = this.#model;
    const times = new RequestTimes();
    request.trace?.model(model.name, model.version, request.id);
    const decoupled = this.decoupled;
    let requested: readonly { name: string; classification?: number }[] = [];
    let cached: CacheUse | undefined;
    const stream = new ResponseStream(listener, {
      responseOf: (outputs) => this.#response(request, this.#selectOutputs(request.trace, requested, outputs, cached)),
      signal: request.signal, endsOnCancel: decoupled,
      onEnd: (error) => {
        if (decoupled) this.#context.openStreams.delete(stream);
        this.#ended(request, times, error, cached);
      },
      flow: request.flow, backlog: this.#context.streamBacklog,
      timing: decoupled ? new ResponseTiming(times, model.statistics) : undefined,
    });
    if (stream.ended) return;
    if (decoupled) this.#context.openStreams.add(stream);
    try {
      if (this.#context.shuttingDown()) throw new InferenceError("UNAVAILABLE", "Server is shutting down");
      const validated = validateRequest(request, model.signature, this.#context.requestLimits);
      requested = validated.outputs;
      const cache = decoupled ? undefined : this.#context.cacheFor(model);
      if (cache !== undefined) {
        const lookupStartNs = process.hrtime.bigint();
        const key = ResponseCache.key(model.name, model.version, validated.inputs, validated.outputs);
        const hit = cache.get(key);
        const lookupNs = Number(process.hrtime.bigint() - lookupStartNs);
        cached = { cache, key, lookupNs };
        if (hit !== undefined) {
          request.trace?.tensors("TENSOR_BACKEND_OUTPUT", hit);
          cached.outcome = { hit: true, ns: lookupNs };
          model.statistics.recordCacheHit(lookupNs);
          return stream.answer(this.#response(request, hit));
        }
      }
      model.scheduler.enqueue(validated, {
        priority: integerParameter(request.parameters, "priority"), timeoutUs: integerParameter(request.parameters, "timeout"),
        // A decoupled model learns of the client's cancellation through its stream; others through the scheduler.
        signal: decoupled ? stream.signal : request.signal,
        parameters: request.parameters, id: request.id, trace: request.trace, times, sink: stream, chain: request.chain,
      });
    } catch (error) {
      stream.fail(asInferenceError(error));
    }
  }

  /**
   * A request that has one answer: the stream's one response, or its error. Refuses a decoupled model up front
   * (its responses can only be streamed); a stream of other than one response fails INTERNAL.
   */
  infer(request: InferRequest): Promise<InferResponse> {
    if (this.decoupled) {
      return Promise.reject(new InferenceError("UNSUPPORTED", `model '${this.name}' is decoupled (model_transaction_policy { decoupled: true }): its responses can only be streamed`));
    }
    return new Promise<InferResponse>((resolve, reject) => {
      let answer: InferResponse | InferenceError | undefined;
      let count = 0;
      this.stream(request, ({ response, final }) => {
        if (response !== undefined) {
          answer = response;
          count++;
        }
        if (!final) return;
        if (answer instanceof InferenceError) reject(answer);
        else if (count !== 1 || answer === undefined) reject(new InferenceError("INTERNAL", NOT_ONE_RESPONSE));
        else resolve(answer);
      });
    });
  }

  #response(request: InferRequest, outputs: readonly OutputTensor[]): InferResponse {
    return { modelName: this.name, modelVersion: this.version, id: request.id, outputs };
  }

  /**
   * The requested outputs (classified where asked), stored in the response cache when the request uses it. A traced
   * request's are traced as the model made them: Triton traces a response's outputs as it is sent
   * (infer_response.cc, Send), and classifies them later, in its frontend.
   */
  #selectOutputs(
    trace: InferenceTrace | undefined, requested: readonly { name: string; classification?: number }[], outputs: readonly OutputTensor[], cached: CacheUse | undefined,
  ): OutputTensor[] {
    const { signature } = this.#model;
    const selected = requested.map((want) => {
      const output = outputs.find((o) => o.name === want.name);
      if (output === undefined) throw new InferenceError("INTERNAL", `model produced no output '${want.name}'`);
      trace?.tensors("TENSOR_BACKEND_OUTPUT", [output]);
      if (want.classification === undefined) return output;
      const labels = signature.outputs.find((o) => o.name === want.name)?.labels;
      return classify(output, want.classification, signature.maxBatchSize > 0, labels);
    });
    if (cached !== undefined) {
      const insertStartNs = process.hrtime.bigint();
      cached.cache.set(cached.key, selected);
      cached.outcome = { hit: false, ns: cached.lookupNs + Number(process.hrtime.bigint() - insertStartNs) };
      this.#model.statistics.recordCacheMiss(cached.outcome.ns);
    }
    return selected;
  }

  /** The request is over: its trace, statistics and observers, from the times it carries. */
  #ended(request: InferRequest, times: RequestTimes, error: InferenceError | undefined, cached: CacheUse | undefined): void {
    const model = this.#model;
    times.endNs = process.hrtime.bigint();
    if (request.trace !== undefined) times.writeTrace(request.trace);
    const requestNs = times.requestNs;
    const queueNs = times.queueNs;
    if (error === undefined) model.statistics.recordSuccess(requestNs, queueNs);
    else model.statistics.recordFailure(requestNs);
    if (!this.#context.observed()) return;
    this.#context.report({
      modelName: model.name, modelVersion: this.version, failureReason: error === undefined ? undefined : failureReasonOf(error), requestNs, queueNs,
      cache: error === undefined ? cached?.outcome : undefined,
    });
  }
}
