import { asInferenceError, type CancellationSignal, InferenceError, type InferenceTrace, type ModelHandle, type ResponseFlow, type StreamResponse } from "../../core/index";
import type { InferParameter } from "../../../protocol/grpc-types/longs-as-strings/inference/InferParameter";
import type { ModelStreamInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelStreamInferResponse";
import { encodeModelInferResponse } from "./infer-response-encoder";
import { decodeHeld } from "./model-infer";
import type { RequestBytesBudget } from "../request-bytes-budget";
import type { ModelInferMessage } from "./off-thread-infer-request";

/** Triton's reserved request parameter asking for an empty response that carries only the final flag. */
const EMPTY_FINAL_RESPONSE_PARAMETER = "triton_enable_empty_final_response";

const NOTHING_PLACED = new Map<string, never>();

function finalFlag(final: boolean): Record<string, InferParameter> {
  return { triton_final_response: { bool_param: final } };
}

/** One of a decoupled request's responses as ModelStreamInfer writes it; undefined when nothing is written. */
export type StreamedResponse =
  | { readonly message: ModelStreamInferResponse; readonly final: boolean }
  | { readonly error: InferenceError; readonly id: string; readonly final: boolean };

/**
 * Runs one ModelStreamInfer request on a decoupled model (Triton's ModelStreamInferHandler for a decoupled model):
 * each response the model sends is handed to `write` as it comes, in the order sent, marked
 * `triton_final_response` false except the last; the final flag sent alone becomes the empty final response
 * (`id`, model and that flag) only when the request set `triton_enable_empty_final_response`, and nothing
 * otherwise. An error response is handed over as an error, with the request's id. Tensors in shared memory are
 * not supported for a decoupled model here. The message and its decoded tensors are held against `budget` until
 * the final response. The model's sends wait while the call's client does not take its responses (`call.flow`).
 * Resolves once the final response was handed over.
 */
export function decoupledStreamInfer(
  model: ModelHandle, budget: RequestBytesBudget, message: ModelInferMessage, call: { readonly signal: CancellationSignal; readonly flow: ResponseFlow },
  trace: InferenceTrace | undefined, write: (response: StreamedResponse) => void,
): Promise<void> {
  const lease = budget.lease();
  let decoded: ReturnType<typeof decodeHeld>;
  try {
    decoded = decodeHeld(lease, message, model, false);
    if (decoded.sharedMemory !== undefined) {
      throw new InferenceError("UNSUPPORTED", "shared memory tensors are not supported for a decoupled model's requests here");
    }
  } catch (error) {
    lease.release();
    write({ error: asInferenceError(error), id: message.id, final: true });
    return Promise.resolve();
  }
  const emptyFinal = decoded.request.parameters?.[EMPTY_FINAL_RESPONSE_PARAMETER] === true;
  return new Promise<void>((resolve) => model.stream({ ...decoded.request, signal: call.signal, flow: call.flow, trace }, (event: StreamResponse) => {
    const { response, final } = event;
    if (final) {
      lease.release();
      resolve();
    }
    if (response instanceof InferenceError) {
      write({ error: response, id: message.id, final });
    } else if (response !== undefined) {
      write({ message: { error_message: "", infer_response: { ...encodeModelInferResponse(response, NOTHING_PLACED), parameters: finalFlag(final) } }, final });
    } else if (emptyFinal) {
      const infer_response = { id: message.id, model_name: message.model_name, model_version: message.model_version, outputs: [], raw_output_contents: [], parameters: finalFlag(true) };
      write({ message: { error_message: "", infer_response }, final: true });
    }
  }));
}
