import { ModelCallError } from "./model-call-error";
import type { ModelCallAnswer, ModelCallMessage } from "./model-call-protocol";
import { backendTensor, modelTensor } from "./model-tensors";
import type { ExecuteContext, ExecuteRequest, InferOptions, InferResult, OutputTensor } from "./typescript-model";

interface PendingCall {
  readonly model: string;
  readonly resolve: (result: InferResult) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The worker's side of model calls: `context.infer` posts each call to the main thread (the inputs copied into
 * buffers of their own and transferred) and settles it with the answer. Calls of an execution that ended are
 * forgotten, never settled: nothing awaits them, and a rejection nobody handles would end the thread.
 */
export class ModelCallClient {
  readonly #post: (message: ModelCallMessage, transfer: ArrayBuffer[]) => void;
  readonly #pending = new Map<number, PendingCall>();
  #nextId = 0;

  constructor(post: (message: ModelCallMessage, transfer: ArrayBuffer[]) => void) {
    this.#post = post;
  }

  /** The context of one execute() call; `end` closes it when execute() has settled. */
  open(requests: readonly ExecuteRequest[]): { context: ExecuteContext; end: () => void } {
    let open = true;
    const ids: number[] = [];
    const context: ExecuteContext = {
      infer: async (model, inputs, options = {}) => {
        if (!open) throw new TypeError(`context.infer('${model}') was called after execute() returned: the request it served is answered`);
        const id = this.#nextId++;
        ids.push(id);
        return this.#send(id, requestIndex(requests, options), model, inputs, options);
      },
    };
    return {
      context, end: () => {
        open = false;
        for (const id of ids) this.#pending.delete(id);
      },
    };
  }

  #send(id: number, request: number, model: string, inputs: Readonly<Record<string, OutputTensor>>, options: InferOptions): Promise<InferResult> {
    const transfer: ArrayBuffer[] = [];
    const tensors = Object.entries(inputs).map(([name, tensor]) => {
      try {
        return { name, ...backendTensor(tensor, transfer) };
      } catch (error) {
        throw new TypeError(`context.infer('${model}'): input '${name}' ${(error as Error).message}`, { cause: error });
      }
    });
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { model, resolve, reject });
      this.#post({
        type: "model-call", callId: id, request, modelName: model, modelVersion: options.version === undefined ? undefined : String(options.version),
        inputs: tensors, outputs: options.outputs, parameters: options.parameters,
      }, transfer);
    });
  }

  settle(answer: ModelCallAnswer): void {
    const pending = this.#pending.get(answer.callId);
    if (pending === undefined) return;
    this.#pending.delete(answer.callId);
    const { result } = answer;
    if ("error" in result) {
      pending.reject(new ModelCallError(result.error.code, result.error.message, pending.model));
      return;
    }
    const outputs = Object.fromEntries(result.outputs.map((tensor) => [tensor.name, modelTensor(tensor)]));
    pending.resolve({ modelName: result.modelName, modelVersion: result.modelVersion, outputs });
  }
}

function requestIndex(requests: readonly ExecuteRequest[], options: InferOptions): number {
  if (options.request === undefined) {
    if (requests.length === 1) return 0;
    throw new TypeError(`context.infer() needs options.request in a batch of ${requests.length} requests: the request the call is made for`);
  }
  const index = requests.indexOf(options.request);
  if (index < 0) throw new TypeError("context.infer(): options.request is not one of the requests of this execute() call");
  return index;
}
