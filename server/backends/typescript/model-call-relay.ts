import type { BackendRequest, TensorMap } from "../backend";
import { type NamedTensor, postableTensors } from "../instance-worker";
import type { ModelCallAnswer, ModelCallMessage } from "./model-call-protocol";

/**
 * The main thread's side of one instance's model calls: each call its worker posts during an execution goes to
 * the caller the core gave the request it names, and the answer goes back with its output buffers transferred.
 * When the execution ends (answered, failed, timed out, its thread died), the calls still pending are cancelled.
 */
export class ModelCallRelay {
  readonly #post: (answer: ModelCallAnswer, transfer: readonly ArrayBuffer[]) => void;
  #requests: readonly BackendRequest[] = [];
  #execution: AbortController | undefined;

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
    this.#requests = [];
  }

  relay(message: ModelCallMessage): void {
    const caller = this.#requests[message.request]?.caller;
    if (caller === undefined) {
      this.#answer(message.callId, { error: { code: "UNAVAILABLE", message: `model call to '${message.modelName}' refused: the request it is made for cannot call models (a warmup request)` } });
      return;
    }
    const signal = (this.#execution ??= new AbortController()).signal;
    const inputs: TensorMap = new Map(message.inputs.map(({ name, ...tensor }) => [name, tensor]));
    void caller.infer({
      modelName: message.modelName, modelVersion: message.modelVersion, inputs, outputs: message.outputs, parameters: message.parameters, signal,
    }).then((result) => {
      if ("error" in result) {
        this.#answer(message.callId, result);
        return;
      }
      const transfer = new Set<ArrayBuffer>();
      const outputs: NamedTensor[] = postableTensors(result.outputs, transfer);
      const answer = { modelName: result.modelName, modelVersion: result.modelVersion, outputs };
      try {
        this.#answer(message.callId, answer, [...transfer]);
      } catch {
        // A buffer that cannot move (one a native addon owns) is copied instead.
        this.#answer(message.callId, answer);
      }
    }).catch((error: unknown) => {
      this.#answer(message.callId, { error: { code: "INTERNAL", message: `model call to '${message.modelName}': its answer could not reach the model: ${(error as Error).message}` } });
    });
  }

  #answer(callId: number, result: ModelCallAnswer["result"], transfer: readonly ArrayBuffer[] = []): void {
    this.#post({ type: "model-call-answer", callId, result }, transfer);
  }
}
