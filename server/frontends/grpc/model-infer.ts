import { type CancellationSignal, type InferenceCore, InferenceError, type InferenceTrace, type ModelHandle } from "../../core/index";
import { admitHeld, type BudgetLease, holdOrLetGo, type RequestBytesBudget, retainedBytes } from "../request-bytes-budget";
import { releaseMemoryNow } from "../release-memory";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { inferWithSharedMemory } from "../shared-memory/tensor-shared-memory";
import { type DecodedModelInferRequest, decodeModelInferRequest } from "./infer-request-decoder";
import type { InferRequestHeader } from "./infer-request-worker";
import type { ModelInferMessage } from "./off-thread-infer-request";
import { type EncodedModelInferResponse, encodeModelInferResponse } from "./infer-response-encoder";

/**
 * The message's model, resolved once for the request: NOT_FOUND or UNAVAILABLE before any tensor is decoded, so an
 * unknown model is refused as such whatever its inputs, as in Triton.
 */
export function modelOf(core: InferenceCore, message: Pick<InferRequestHeader, "model_name" | "model_version">): ModelHandle {
  return core.model(message.model_name, message.model_version === "" ? undefined : message.model_version);
}

/**
 * Decodes a message's tensors (or takes those a worker decoded), holding the message, then its decoded tensors and
 * the copies `model` will make of them and of its outputs, its response's frame included ({@link
 * bytesAfterAdmission}), against `lease` (which the caller releases once the request is answered). With
 * `freedBeforeFrame`, the request's tensors and message are freed before its response is framed
 * ({@link releaseTensors}), and the frame reuses their memory. Throws the decoder's InferenceError, or the budget's
 * refusal.
 */
export function decodeHeld(lease: BudgetLease, message: ModelInferMessage, model: ModelHandle, freedBeforeFrame: boolean): DecodedModelInferRequest {
  const admit = (decoded: DecodedModelInferRequest, views: readonly Uint8Array[]): DecodedModelInferRequest => {
    admitHeld(lease, views, model, decoded.request, { reusesRequestMemory: freedBeforeFrame });
    return decoded;
  };
  if ("decoded" in message) {
    if (message.decoded instanceof InferenceError) throw message.decoded;
    return admit(message.decoded, message.decoded.request.inputs.map((input) => input.data));
  }
  holdOrLetGo(message.raw_input_contents, () => lease.holdAtLeast(retainedBytes(message.raw_input_contents)));
  const decoded = decodeModelInferRequest(message);
  return admit(decoded, [...message.raw_input_contents, ...decoded.request.inputs.map((input) => input.data)]);
}

/**
 * Runs one `ModelInferRequest` on a model that answers once, for ModelInfer and for each such message of
 * ModelStreamInfer. Tensors in shared memory are read from and written to `sharedMemory`'s regions. The message,
 * its decoded tensors and the copies they will cost are held on `lease`, which the caller releases once the
 * response is framed (the frame is one of those copies); once the response is encoded the message lets go of its
 * tensors ({@link releaseTensors}). `signal` drops the request while it is still queued; `trace` is a sampled
 * request's. Rejects with the core's InferenceError.
 */
export async function modelInferHeld(
  model: ModelHandle, sharedMemory: SystemSharedMemory, lease: BudgetLease, message: ModelInferMessage, signal: CancellationSignal,
  trace?: InferenceTrace,
): Promise<EncodedModelInferResponse> {
  let answered = false;
  try {
    const decoded = decodeHeld(lease, message, model, true);
    const { response, placed } = await inferWithSharedMemory(sharedMemory, decoded.sharedMemory, decoded.request, (request) => model.infer({ ...request, signal, trace }));
    answered = true;
    return encodeModelInferResponse(response, placed);
  } finally {
    releaseTensors(message, answered);
  }
}

/** {@link modelInferHeld} on a lease of its own, released once the response is encoded. */
export async function modelInfer(
  model: ModelHandle, sharedMemory: SystemSharedMemory, budget: RequestBytesBudget, message: ModelInferMessage, signal: CancellationSignal,
  trace?: InferenceTrace,
): Promise<EncodedModelInferResponse> {
  const lease = budget.lease();
  try {
    return await modelInferHeld(model, sharedMemory, lease, message, signal, trace);
  } finally {
    lease.release();
  }
}

/**
 * Drops a request message's tensor payloads once its response is encoded. grpc-js keeps a unary call's request
 * message in the call's closures (its handler's `requestMessage`, the call's `request`), and a finished call's
 * objects (its node:http2 stream, grpc-js call and their closures) are often promoted to V8's old generation, where
 * only a mark-compact frees them. A 600 KB tensor's message buffer promoted with them is external memory, for which
 * V8 ran a mark-compact every 50-70 such calls; without it the calls' objects alone cost no measurable GC.
 *
 * Once `answered` (the model's response came: its execution, which copied the inputs, is over), the memory of the
 * message's large buffers and of its decoded tensors goes at once ({@link releaseMemoryNow}): the response's frame,
 * made next, reuses it in the budget (decodeHeld). Not before: a request dropped while queued may be gathered still.
 */
function releaseTensors(message: ModelInferMessage, answered: boolean): void {
  const views = "decoded" in message
    ? (message.decoded instanceof InferenceError ? [] : message.decoded.request.inputs.map((input) => input.data))
    : message.raw_input_contents;
  // A mid-sized message's memory goes back to the request pool for the next request (releaseMemoryNow does that too).
  if (answered) for (const buffer of new Set(views.map((view) => view.buffer))) releaseMemoryNow(buffer);
  // A message decoded on a worker is this call's alone: nothing else keeps it.
  if ("decoded" in message) return;
  message.raw_input_contents = [];
  for (const input of message.inputs) input.contents = null;
}

/** Triton's ModelInfer refuses a decoupled model (src/grpc/infer_handler.cc): its responses need ModelStreamInfer. */
export function refuseDecoupledModelInfer(model: ModelHandle): void {
  if (model.decoupled) throw new InferenceError("UNSUPPORTED", "ModelInfer RPC doesn't support models with decoupled transaction policy");
}
