import type { InferenceClient, InferInput, InferOptions } from "../../client/index";
import type { RequestSender } from "./load-generator";

/**
 * Sends the same request over and over, encoded once up front as perf_analyzer does with its input data: the
 * load generator shares the cores with the server, so every microsecond it spends re-encoding tensors is taken
 * from the side being measured (and the in-process baseline never pays it).
 */
export function preparedSender(client: InferenceClient, model: string, inputs: readonly InferInput[], options?: InferOptions): RequestSender {
  const prepared = client.prepareInfer(model, inputs, options);
  return async () => {
    const result = await client.inferPrepared(prepared);
    return { sendNs: result.timing.sendNs, receiveNs: result.timing.receiveNs };
  };
}
