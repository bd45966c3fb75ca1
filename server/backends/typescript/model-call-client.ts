import { ModelCallError } from "./model-call-error";
import type { ModelCallAnswer, ModelCallCancel, ModelCallMessage } from "./model-call-protocol";
import { ModelCallStream } from "./model-call-stream";
import { backendTensor, modelTensor } from "./model-tensors";
import type { ExecuteContext, ExecuteRequest, InferOptions, InferResult, OutputTensor } from "./typescript-model";

/** Where the answers to one call go: the result (or the callee's error), and whether it is the call's last. */
type AnswerListener = (result: InferResult | ModelCallError | undefined, final: boolean) => void;

/**
 * The worker's side of model calls: `context.infer` and `context.inferStream` post each call to the main thread
 * (the inputs copied into buffers of their own and transferred) and hand it the answers. Calls of an execution
 * that ended are forgotten, never settled: nothing awaits them, and a rejection nobody handles would end the thread.
 */
export class ModelCallClient {
  readonly #post: (message: ModelCallMessage | ModelCallCancel, transfer: ArrayBuffer[]) => void;
  readonly #pending = new Map<number, (answer: ModelCallAnswer) => void>();
  #nextId = 0;

  constructor(post: (message: ModelCallMessage | ModelCallCancel, transfer: ArrayBuffer[]) => void) {
    this.#post = post;
  }

  /**
   * The context of one execute() call; `end` closes it when execute() has settled. `group`: the execution is one of
   * several the main thread handed over at once: its requests start at `requestOffset` among theirs, and the main
   * thread learns from `end` which of its calls to cancel (it sees the group end only).
   */
  open(requests: readonly ExecuteRequest[], group?: { readonly requestOffset: number }): { context: ExecuteContext; end: () => void } {
    const requestOffset = group?.requestOffset ?? 0;
    let open = true;
    const ids: number[] = [];
    const streams: ModelCallStream[] = [];
    const start = (method: string, model: string, inputs: Readonly<Record<string, OutputTensor>>, options: InferOptions, stream: boolean, listener: AnswerListener): number => {
      if (!open) throw new TypeError(`context.${method}('${model}') was called after execute() returned: the request it served is answered`);
      const id = this.#nextId++;
      ids.push(id);
      this.#send(id, method, requestOffset + requestIndex(method, requests, options), model, inputs, options, stream, listener);
      return id;
    };
    const context: ExecuteContext = {
      infer: async (model, inputs, options = {}) => new Promise<InferResult>((resolve, reject) => {
        start("infer", model, inputs, options, false, (result) => {
          if (result instanceof Error) reject(result);
          else if (result === undefined) reject(new ModelCallError("INTERNAL", "the call ended without a response", model));
          else resolve(result);
        });
      }),
      inferStream: (model, inputs, options = {}) => {
        let id = -1;
        const stream = new ModelCallStream(model, () => {
          this.#pending.delete(id);
          this.#post({ type: "model-call-cancel", callId: id }, []);
        });
        id = start("inferStream", model, inputs, options, true, (result, final) => stream.push(result, final));
        streams.push(stream);
        return stream;
      },
    };
    return {
      context, end: () => {
        open = false;
        for (const id of ids) {
          if (group !== undefined && this.#pending.has(id)) this.#post({ type: "model-call-cancel", callId: id }, []);
          this.#pending.delete(id);
        }
        // A read still waiting would wait forever: the main thread cancelled the call with the execution.
        for (const stream of streams) stream.push(new ModelCallError("CANCELLED", "the call was cancelled: the execute() that made it returned", stream.model), true);
      },
    };
  }

  #send(
    id: number, method: string, request: number, model: string, inputs: Readonly<Record<string, OutputTensor>>, options: InferOptions, stream: boolean,
    listener: AnswerListener,
  ): void {
    const transfer: ArrayBuffer[] = [];
    const tensors = Object.entries(inputs).map(([name, tensor]) => {
      try {
        return { name, ...backendTensor(tensor, transfer) };
      } catch (error) {
        throw new TypeError(`context.${method}('${model}'): input '${name}' ${(error as Error).message}`, { cause: error });
      }
    });
    this.#pending.set(id, (answer) => listener(resultOf(answer, model), answer.final));
    this.#post({
      type: "model-call", callId: id, stream, request, modelName: model, modelVersion: options.version === undefined ? undefined : String(options.version),
      inputs: tensors, outputs: options.outputs, parameters: options.parameters,
    }, transfer);
  }

  settle(answer: ModelCallAnswer): void {
    const listener = this.#pending.get(answer.callId);
    if (listener === undefined) return;
    if (answer.final) this.#pending.delete(answer.callId);
    listener(answer);
  }
}

/** An answer as the model gets it; an error names the model called, as the caller named it. */
function resultOf({ result }: ModelCallAnswer, model: string): InferResult | ModelCallError | undefined {
  if (result === undefined) return undefined;
  if ("error" in result) return new ModelCallError(result.error.code, result.error.message, model);
  const outputs = Object.fromEntries(result.outputs.map((tensor) => [tensor.name, modelTensor(tensor)]));
  return { modelName: result.modelName, modelVersion: result.modelVersion, outputs };
}

function requestIndex(method: string, requests: readonly ExecuteRequest[], options: InferOptions): number {
  if (options.request === undefined) {
    if (requests.length === 1) return 0;
    throw new TypeError(`context.${method}() needs options.request in a batch of ${requests.length} requests: the request the call is made for`);
  }
  const index = requests.indexOf(options.request);
  if (index < 0) throw new TypeError(`context.${method}(): options.request is not one of the requests of this execute() call`);
  return index;
}
