/**
 * A TypeScript model that calls `identity` (FP32 INPUT0 -> OUTPUT0) `calls` times in a row, a request parameter,
 * then answers the last output: what one model call costs, the request around them spread over many. `npm run
 * build` compiles it; the BLS bench copies it in as model.js.
 */
import type { ExecuteContext, ExecuteRequest, ExecuteResponse, Tensor, TypeScriptModel } from "gcp-inference-stack/typescript-backend";

export default class BlsCallLoop implements TypeScriptModel {
  async execute(requests: readonly ExecuteRequest[], context: ExecuteContext): Promise<ExecuteResponse[]> {
    return Promise.all(requests.map(async (request): Promise<ExecuteResponse> => {
      let tensor: Tensor = request.inputs["INPUT0"]!;
      for (let i = 0; i < Number(request.parameters["calls"] ?? 0); i++) {
        tensor = (await context.infer("identity", { INPUT0: tensor }, { request, outputs: ["OUTPUT0"] })).outputs["OUTPUT0"]!;
      }
      return { outputs: { OUTPUT0: tensor } };
    }));
  }
}
