import { InferenceError, type LoadOverrides } from "../../core/index";
import { isRecord } from "./infer-request-codec";

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** The JSON object a repository request may carry; an empty body is an empty object. */
export function parseRepositoryBody(body: Buffer): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw invalid(`failed to parse the request JSON buffer: ${(error as Error).message}`);
  }
  if (!isRecord(parsed)) throw invalid("the request body must be a JSON object");
  return parsed;
}

/** Standard base64 (Python's base64.b64encode, as tritonclient sends it), whitespace allowed between groups. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(key: string, text: string): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw invalid(`load parameter '${key}' is not valid base64`);
  return Buffer.from(compact, "base64");
}

/**
 * A load request's `parameters` as Triton's REST frontend reads them: `config` (a JSON model config, as a string)
 * and `file:<path>` (base64 file contents). Any other parameter is refused in the words Triton's gRPC frontend
 * uses (its REST frontend answers 500 "unexpected error on creating Triton parameter").
 */
export function loadOverridesOf(body: Record<string, unknown>): LoadOverrides | undefined {
  const parameters = body["parameters"];
  if (parameters === undefined) return undefined;
  if (!isRecord(parameters)) throw invalid("'parameters' of a load request must be a JSON object");
  let config: string | undefined;
  const files = new Map<string, Uint8Array>();
  for (const [key, value] of Object.entries(parameters)) {
    if (key !== "config" && !key.startsWith("file:")) throw invalid(`unrecognized load parameter '${key}'.`);
    if (typeof value !== "string") throw invalid(`invalid value type for load parameter '${key}', expected a string`);
    if (key === "config") config = value;
    else files.set(key, decodeBase64(key, value));
  }
  return config === undefined && files.size === 0 ? undefined : { config, files };
}

/** An unload request's `unload_dependents` parameter (false when absent). */
export function unloadDependentsOf(body: Record<string, unknown>): boolean {
  const parameters = body["parameters"];
  if (parameters === undefined) return false;
  if (!isRecord(parameters)) throw invalid("'parameters' of an unload request must be a JSON object");
  const value = parameters["unload_dependents"];
  if (value !== undefined && typeof value !== "boolean") throw invalid("Unable to parse 'unload_dependents': expected a boolean");
  return value === true;
}
