import { ResponderBuilder, ServerInterceptingCall, type ServerInterceptor, ServerListenerBuilder, status } from "@grpc/grpc-js";
import { type ApiGroup, type ApiRestrictions, unlocker } from "../api-restrictions";

/** Triton's header prefix for restricted protocols (src/grpc/grpc_server.h, kRestrictedProtocolHeaderTemplate). */
export const RESTRICTED_PROTOCOL_PREFIX = "triton-grpc-protocol-";

/** Which group each RPC belongs to, as Triton's grpc_server.cc registers them. */
const GROUP_OF_METHOD: Readonly<Record<string, ApiGroup>> = {
  "/inference.GRPCInferenceService/ServerLive": "health",
  "/inference.GRPCInferenceService/ServerReady": "health",
  "/inference.GRPCInferenceService/ModelReady": "health",
  "/grpc.health.v1.Health/Check": "health",
  "/grpc.health.v1.Health/Watch": "health",
  "/inference.GRPCInferenceService/ServerMetadata": "metadata",
  "/inference.GRPCInferenceService/ModelMetadata": "metadata",
  "/inference.GRPCInferenceService/ModelInfer": "inference",
  "/inference.GRPCInferenceService/ModelStreamInfer": "inference",
  "/inference.GRPCInferenceService/ModelConfig": "model-config",
  "/inference.GRPCInferenceService/ModelStatistics": "statistics",
  "/inference.GRPCInferenceService/RepositoryIndex": "model-repository",
  "/inference.GRPCInferenceService/RepositoryModelLoad": "model-repository",
  "/inference.GRPCInferenceService/RepositoryModelUnload": "model-repository",
  "/inference.GRPCInferenceService/SystemSharedMemoryStatus": "shared-memory",
  "/inference.GRPCInferenceService/SystemSharedMemoryRegister": "shared-memory",
  "/inference.GRPCInferenceService/SystemSharedMemoryUnregister": "shared-memory",
  "/inference.GRPCInferenceService/CudaSharedMemoryStatus": "shared-memory",
  "/inference.GRPCInferenceService/CudaSharedMemoryRegister": "shared-memory",
  "/inference.GRPCInferenceService/CudaSharedMemoryUnregister": "shared-memory",
  "/inference.GRPCInferenceService/TraceSetting": "trace",
  "/inference.GRPCInferenceService/LogSettings": "logging",
};

/**
 * Triton's `--grpc-restricted-protocol`: a call to a restricted group without metadata
 * `triton-grpc-protocol-<key>: <value>` ends UNAVAILABLE before its handler runs (for streams too), with Triton's
 * message. Unrestricted calls pass through untouched.
 */
export function restrictedProtocolInterceptor(restrictions: ApiRestrictions): ServerInterceptor {
  // Each restricted method's metadata key, refusal and check, built once so a call costs one lookup.
  const guards = new Map<string, { key: string; details: string; unlocks: (received: string | undefined) => boolean }>();
  for (const [path, group] of Object.entries(GROUP_OF_METHOD)) {
    const restriction = restrictions.get(group);
    if (restriction === undefined) continue;
    const key = RESTRICTED_PROTOCOL_PREFIX + restriction.header;
    // Triton's standard health service answers its own words (grpc_server.cc HealthCallbackService::Check).
    const details = path === "/grpc.health.v1.Health/Check" ? "Missing or mismatched restricted header" : `This protocol is restricted, expecting header '${key}'`;
    guards.set(path, { key, details, unlocks: unlocker(restriction) });
  }
  return (method, call) => {
    const guard = guards.get(method.path);
    if (guard === undefined) return new ServerInterceptingCall(call);
    const { key, details, unlocks } = guard;
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const [value] = metadata.get(key);
        if (unlocks(typeof value === "string" ? value : undefined)) next(metadata);
        else call.sendStatus({ code: status.UNAVAILABLE, details });
      })
      .build();
    return new ServerInterceptingCall(call, new ResponderBuilder().withStart((next) => next(listener)).build());
  };
}
