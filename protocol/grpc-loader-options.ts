/**
 * The @grpc/proto-loader options the gRPC server and client decode with. Each set has its own generated message
 * types under `protocol/grpc-types/` (`npm run grpc-types`, from these very objects), because the shape of a
 * received message depends on the options: the types hold only with exactly these.
 */

/**
 * The server's: proto field names, 64-bit integers as decimal strings (exact, unlike doubles: a request's
 * int64/uint64 parameters and shapes may use all 64 bits), enums by name, `bytes` as Buffers that point into the
 * received message, unset fields filled (message fields as `null`), and each oneof's chosen member named by a
 * virtual field.
 */
export const GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/**
 * The client's: as the server's, but 64-bit integers as numbers (shapes, counters and durations stay far below
 * 2^53; tensor data travels as raw bytes, never as int64 fields), so results read as the HTTP client's.
 */
export const GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS = { ...GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS, longs: Number } as const;
