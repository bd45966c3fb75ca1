import Module, { createRequire } from "node:module";
import type { TypeScriptModelClass } from "./typescript-model";

type ResolveFilename = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;

let fallbackInstalled = false;

/**
 * Lets model files import what the server itself has, wherever the model repository lies (a mounted volume, a
 * temporary folder): a bare specifier the model's own node_modules lack is resolved from the server's location,
 * so `sharp`, `onnxruntime-node` and the package itself (`gcp-inference-stack/typescript-backend`) are always
 * there, as Triton's Python stub puts `triton_python_backend_utils` and its environment on `sys.path`. The
 * model's own dependencies still win. Node 20 has no public synchronous resolve hook for `require` (that is
 * `module.registerHooks`, Node 22.15+), hence the wrapper around Module._resolveFilename, in this worker only.
 */
function resolveFromServerAsFallback(): void {
  if (fallbackInstalled) return;
  fallbackInstalled = true;
  const serverRequire = createRequire(__filename);
  const loader = Module as unknown as { _resolveFilename: ResolveFilename };
  const original = loader._resolveFilename;
  loader._resolveFilename = function resolveFilename(request, parent, isMain, options) {
    try {
      return original.call(this, request, parent, isMain, options);
    } catch (error) {
      const bare = !request.startsWith(".") && !request.startsWith("/") && !request.startsWith("node:");
      if (!bare || (error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
      try {
        return serverRequire.resolve(request);
      } catch {
        throw error;
      }
    }
  };
}

/** Loads `model.js` and returns its model class: the default export (ES module output or `module.exports =`). */
export function loadModelClass(modelPath: string): TypeScriptModelClass {
  resolveFromServerAsFallback();
  // The model file is only known at run time: a dynamic require is the loader's whole job here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(modelPath) as unknown;
  const candidate = typeof exported === "function" ? exported : (exported as { default?: unknown } | null)?.default;
  if (typeof candidate !== "function") {
    throw new Error(`${modelPath} must export its model class as the default export (export default class ... implements TypeScriptModel)`);
  }
  return candidate as TypeScriptModelClass;
}
