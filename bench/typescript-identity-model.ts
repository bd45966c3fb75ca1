/**
 * The identity model as a TypeScript-backend model (OUTPUT0 = INPUT0), for measuring what the backend itself
 * costs against the built-in identity backend. `npm run build` compiles it; the bench copies it in as model.js.
 */
import type { ExecuteRequest, ExecuteResponse, TypeScriptModel } from "gcp-inference-stack/typescript-backend";

export default class TypeScriptIdentity implements TypeScriptModel {
  execute(requests: readonly ExecuteRequest[]): ExecuteResponse[] {
    return requests.map((request) => ({ outputs: { OUTPUT0: request.inputs["INPUT0"]! } }));
  }
}
