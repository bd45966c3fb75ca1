import type { BackendRequest, ModelCall, ModelCallResult, TensorMap } from "../backend";
import { type NamedTensor, postableTensors } from "../instance-worker";
import type { ModelCallAnswer, ModelCallCancel, ModelCallMessage } from "./model-call-protocol";

/**
 * The main thread's side of one instance's model calls: each call its worker posts during an execution goes to
 * the caller the core gave the request it names, and the answers go back with their output buffers transferred
 * (one for `context.infer`, one per response of the callee for `context.inferStream`). A call the worker cancels
 * (a streamed call the model stopped reading; in a group of executions, a call of one that ended) is cancelled;
 * when the execution (or group) ends (answered, failed, timed out, its thread died), every call still pending is.
 */
export class ModelCallRelay {
  readonly #post: (answer: ModelCallAnswer, transfer: readonly ArrayBuffer[]) => void;
  #requests: readonly BackendRequest[] = [];
  #execution: AbortController | undefined;
  /** The calls of this execution not yet final, by call id: the model may stop any of them. */
  readonly #calls = new Map<number, AbortController>();

  constructor(post: (answer: ModelCallAnswer, transfer: readonly ArrayBuffer[]) => void) {
    this.#post = post;
  }

  /** An execution of `requests` starts; its calls name them by index. */
  begin(requests: readonly BackendRequest[]): void {
    this.#requests = requests;
    this.#execution = undefined;
  }

  /** The execution ended: calls it made that are still pending are cancelled. */
  end(): void {
    this.#execution?.abort();
    this.#execution = undefined;
    this.#calls.clear();
    this.#requests = [];
  }

  relay(message: ModelCallMessage | ModelCallCancel): void {
    if (message.type === "model-call-cancel") {
      this.#calls.get(message.callId)?.abort();
      this.#calls.delete(message.callId);
      return;
    }
    const caller = this.#requests[message.request]?.caller;
    if (caller === undefined) {
      this.#answer(message, { error: { code: "UNAVAILABLE", message: `model call to '${message.modelName}' refused: the request it is made for cannot call models (a warmup request)` } }, true);
      return;
    }
    const execution = (this.#execution ??= new AbortController()).signal;
    const inputs: TensorMap = new Map(message.inputs.map(({ name, ...tensor }) => [name, tensor]));
    const call: ModelCall = { modelName: message.modelName, modelVersion: message.modelVersion, inputs, outputs: message.outputs, parameters: message.parameters };
    const own = new AbortController();
    this.#calls.set(message.callId, own);
    const signal = AbortSignal.any([execution, own.signal]);
    if (!message.stream) {
      void caller.infer({ ...call, signal }).then((result) => {
        this.#calls.delete(message.callId);
        this.#answer(message, result, true);
      });
      return;
    }
    void caller.stream({ ...call, signal }, ({ result, final }) => {
      if (final) this.#calls.delete(message.callId);
      // The model stopped reading (it left its loop, or its execution ended): what the callee still sends is dropped.
      if (!signal.aborted) this.#answer(message, result, final);
    });
  }

  /** Posts one answer, its output buffers moved; an answer that cannot reach the model fails the call instead. */
  #answer({ callId, modelName }: ModelCallMessage, result: ModelCallResult | undefined, final: boolean): void {
    try {
      if (result === undefined || "error" in result) {
        this.#post({ type: "model-call-answer", callId, result, final }, []);
        return;
      }
      const transfer = new Set<ArrayBuffer>();
      const outputs: NamedTensor[] = postableTensors(result.outputs, transfer);
      const answer: ModelCallAnswer = { type: "model-call-answer", callId, result: { modelName: result.modelName, modelVersion: result.modelVersion, outputs }, final };
      try {
        this.#post(answer, [...transfer]);
      } catch {
        // A buffer that cannot move (one a native addon owns) is copied instead.
        this.#post(answer, []);
      }
    } catch (error) {
      const message = `model call to '${modelName}': its answer could not reach the model: ${(error as Error).message}`;
      this.#calls.get(callId)?.abort();
      this.#calls.delete(callId);
      try {
        this.#post({ type: "model-call-answer", callId, result: { error: { code: "INTERNAL", message } }, final: true }, []);
      } catch {
        // The worker is gone: the execution ends, and with it the call.
      }
    }
  }
}
