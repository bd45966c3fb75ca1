import type { InferenceCore, InferRequest, InferResponse } from "../../server/core/index";

/** A request to an in-process core as a frontend makes it: the model resolved once, then its one response (or error). */
export function inferOn(core: InferenceCore, request: InferRequest): Promise<InferResponse> {
  try {
    return core.model(request.modelName, request.modelVersion).infer(request);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
