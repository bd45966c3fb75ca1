import { type CancellationSignal, type InferenceCore, InferenceError, type InferenceTrace } from "../../core/index";
import { type RequestBytesBudget, retainedBytes } from "../request-bytes-budget";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { inferWithSharedMemory } from "../shared-memory/tensor-shared-memory";
import type { ModelInferRequestMessage, ModelInferResponseMessage } from "./grpc-messages";
import { decodeModelInferRequest } from "./infer-request-decoder";
import { encodeModelInferResponse } from "./infer-response-encoder";

/**
 * Runs one `ModelInferRequest` through the core, for ModelInfer and for each message of ModelStreamInfer. The
 * model is looked up before the tensors are decoded, so an unknown model is NOT_FOUND whatever its inputs, as
 * in Triton. Tensors in shared memory are read from and written to `sharedMemory`'s regions. The message and then
 * its decoded tensors are held against `budget` until the response is encoded. `signal` drops the request while
 * it is still queued; `trace` is a sampled request's. Rejects with the core's InferenceError.
 */
export async function modelInfer(
  core: InferenceCore, sharedMemory: SystemSharedMemory, budget: RequestBytesBudget, message: ModelInferRequestMessage, signal: CancellationSignal,
  trace?: InferenceTrace,
): Promise<ModelInferResponseMessage> {
  core.checkModelAvailable(message.model_name, message.model_version === "" ? undefined : message.model_version);
  const lease = budget.lease();
  try {
    lease.holdAtLeast(retainedBytes(message.raw_input_contents));
    const decoded = decodeModelInferRequest(message);
    lease.holdAtLeast(retainedBytes([...message.raw_input_contents, ...decoded.request.inputs.map((input) => input.data)]));
    const { response, placed } = await inferWithSharedMemory(sharedMemory, decoded.sharedMemory, decoded.request, (request) => core.infer({ ...request, signal, trace }));
    return encodeModelInferResponse(response, placed);
  } finally {
    lease.release();
  }
}

/** Triton's ModelInfer refuses a decoupled model (src/grpc/infer_handler.cc): its responses need ModelStreamInfer. */
export function refuseDecoupledModelInfer(core: InferenceCore, message: ModelInferRequestMessage): void {
  if (core.isDecoupled(message.model_name, message.model_version === "" ? undefined : message.model_version)) {
    throw new InferenceError("UNSUPPORTED", "ModelInfer RPC doesn't support models with decoupled transaction policy");
  }
}
