import type { ModelCall, ModelCaller, ModelCallResult, ModelCallSignal, ModelCallStreamEvent } from "../../backends/backend";
import { isDataType } from "../../../protocol/datatypes";
import { asInferenceError, InferenceError, invalidArg } from "../errors";
import { Cancellation } from "../request/cancellation";
import type { CallLink, CancellationSignal, InferenceTrace, InferRequest, InferResponse } from "../request/inference-request";
import type { StreamListener } from "../request/response-stream";
import type { Tensor } from "../request/tensor";

/** Triton's python backend has no bound; this one keeps a model that calls itself from exhausting the server. */
export const DEFAULT_MAX_CALL_DEPTH = 8;

/** What a request a model serves passes on to the calls the model makes while serving it. */
export interface CallOrigin {
  /** The executions waiting, outermost first, on the request (empty for a client's request). */
  readonly chain: readonly CallLink[] | undefined;
  readonly signal: CancellationSignal | undefined;
  readonly trace: InferenceTrace | undefined;
}

/** The version a call runs on, resolved once (the core's model handle). */
export interface Callee {
  readonly name: string;
  readonly version: string;
  /** Instances that can serve it; 0 for an ensemble, which holds none while its steps run. */
  readonly instanceCount: number;
  /** Whether its answers may be shared (response cache hits): the caller then gets copies it owns. */
  readonly sharesOutputs: boolean;
  /** Whether it answers with a stream of responses (`model_transaction_policy { decoupled: true }`). */
  readonly decoupled: boolean;
  infer(request: InferRequest): Promise<InferResponse>;
  /** Never throws; the last response is marked final. */
  stream(request: InferRequest, listener: StreamListener): void;
}

/** What model calls need of the core. */
export interface ModelCallHost {
  /** Throws the core's error (NOT_FOUND, UNAVAILABLE) when the model cannot be served. */
  model(modelName: string, modelVersion: string | undefined): Callee;
}

/** Aborts when either signal does; `release` stops listening (the call ended). */
function linkedSignal(signals: readonly (CancellationSignal | ModelCallSignal | undefined)[]): { signal: Cancellation; release: () => void } {
  const signal = new Cancellation();
  const abort = (): void => signal.abort();
  const present = signals.filter((s) => s !== undefined);
  for (const s of present) {
    if (s.aborted) signal.abort();
    else s.addEventListener("abort", abort, { once: true });
  }
  return { signal, release: () => present.forEach((s) => s.removeEventListener("abort", abort)) };
}

function describeChain(chain: readonly CallLink[]): string {
  return chain.map((link) => `'${link.modelName}'`).join(" -> ");
}

/**
 * Triton's Business Logic Scripting, in the core: a model's call to another model becomes an ordinary request
 * (validation, the callee's dynamic batcher, queue policy, statistics, a child trace of the request it serves),
 * cancelled with that request. The chain of executions waiting on each other travels with the request, so that a
 * call can be refused before it deadlocks: past {@link maxDepth} nested calls, or into a model whose every
 * instance is already held by an execution of this same chain (it would wait for itself).
 */
export class ModelCalls {
  readonly #host: ModelCallHost;
  readonly #maxDepth: number;

  constructor(host: ModelCallHost, maxDepth = DEFAULT_MAX_CALL_DEPTH) {
    this.#host = host;
    this.#maxDepth = maxDepth;
  }

  /** The caller a request of `self` hands its model: its calls are made on that request's behalf. */
  callerFor(origin: CallOrigin, self: CallLink): ModelCaller {
    const chain = (): readonly CallLink[] => [...(origin.chain ?? []), self];
    return {
      infer: (call) => this.#infer(chain(), origin, call),
      stream: (call, listener) => this.#stream(chain(), origin, call, listener),
    };
  }

  async #infer(chain: readonly CallLink[], origin: CallOrigin, call: ModelCall): Promise<ModelCallResult> {
    const { signal, release } = linkedSignal([origin.signal, call.signal]);
    try {
      const { callee, request } = this.#request(chain, origin, call, signal);
      if (callee.decoupled) {
        throw new InferenceError("UNSUPPORTED", `model '${callee.name}' is decoupled (model_transaction_policy { decoupled: true }): call it with context.inferStream(), which yields its responses as they come`);
      }
      return resultOf(callee, await callee.infer(request));
    } catch (error) {
      return errorResult(error);
    } finally {
      release();
    }
  }

  async #stream(chain: readonly CallLink[], origin: CallOrigin, call: ModelCall, listener: (event: ModelCallStreamEvent) => void): Promise<void> {
    const { signal, release } = linkedSignal([origin.signal, call.signal]);
    try {
      const { callee, request } = this.#request(chain, origin, call, signal);
      await new Promise<void>((resolve) => callee.stream(request, ({ response, final }) => {
        const result = response === undefined ? undefined : response instanceof InferenceError ? errorResult(response) : resultOf(callee, response);
        try {
          listener({ result, final });
        } finally {
          if (final) resolve();
        }
      }));
    } catch (error) {
      listener({ result: errorResult(error), final: true });
    } finally {
      release();
    }
  }

  /** The call as a request of the core, once it passed the deadlock checks; throws the core's error. */
  #request(chain: readonly CallLink[], origin: CallOrigin, call: ModelCall, signal: CancellationSignal): { callee: Callee; request: InferRequest } {
    const callee = this.#host.model(call.modelName, call.modelVersion || undefined);
    this.#refuseDeadlock(chain, callee);
    const inputs = [...call.inputs].map(([name, tensor]): Tensor => {
      if (!isDataType(tensor.datatype)) throw invalidArg(`input '${name}' has an unknown datatype '${tensor.datatype}'`);
      return { name, datatype: tensor.datatype, shape: tensor.shape, data: tensor.data };
    });
    return {
      callee,
      request: {
        modelName: call.modelName, modelVersion: call.modelVersion, parameters: call.parameters, inputs,
        outputs: call.outputs?.map((name) => ({ name })), signal, trace: origin.trace?.child(), chain,
      },
    };
  }

  #refuseDeadlock(chain: readonly CallLink[], callee: Callee): void {
    const path = `${describeChain(chain)} -> '${callee.name}'`;
    if (chain.length > this.#maxDepth) {
      throw new InferenceError("UNAVAILABLE", `model call ${path} refused: it would nest ${chain.length} model calls, beyond the maximum of ${this.#maxDepth} (--model-call-max-depth)`);
    }
    if (callee.instanceCount === 0) return;
    const held = chain.filter((link) => link.modelName === callee.name && String(link.modelVersion) === callee.version).length;
    if (held >= callee.instanceCount) {
      throw new InferenceError(
        "UNAVAILABLE",
        `model call ${path} refused: it would wait for an instance of '${callee.name}' version ${callee.version}, and all ${callee.instanceCount} of them are held by the executions waiting on this call`,
      );
    }
  }
}

function resultOf(callee: Callee, response: InferResponse): ModelCallResult {
  return {
    modelName: response.modelName, modelVersion: response.modelVersion,
    outputs: new Map(response.outputs.map(({ name, ...tensor }) => [name, callee.sharesOutputs ? { ...tensor, data: tensor.data.slice() } : tensor])),
  };
}

function errorResult(error: unknown): ModelCallResult {
  const failure = asInferenceError(error);
  return { error: { code: failure.code, message: failure.message } };
}
