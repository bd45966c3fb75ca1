import { InferenceError } from "../../core/index";

/** What `POST /v2/systemsharedmemory/region/{name}/register` asks for. */
interface SharedMemoryRegistration {
  readonly key: string;
  readonly offset: number;
  readonly byteSize: number;
}

function size(body: Record<string, unknown>, field: string, fallback?: number): number {
  const value = body[field] ?? fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new InferenceError("INVALID_ARG", `shared memory registration: '${field}' must be a non-negative integer`);
  }
  return value;
}

/** The register body `{"key": "/name", "offset": n, "byte_size": n}`; `offset` may be left out (0). */
export function sharedMemoryRegistration(body: Record<string, unknown>): SharedMemoryRegistration {
  const key = body["key"];
  if (typeof key !== "string" || key === "") throw new InferenceError("INVALID_ARG", "shared memory registration: 'key' must be a non-empty string");
  return { key, offset: size(body, "offset", 0), byteSize: size(body, "byte_size") };
}
