import path from "node:path";
import type { ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { modelConfigSchema } from "../../core/index";
import { GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS } from "../../../protocol/grpc-loader-options";

/** The two services the gRPC endpoint serves, loaded from `protocol/proto`. */
export interface GrpcServiceDefinitions {
  /** `inference.GRPCInferenceService` (grpc_service.proto, which imports model_config.proto). */
  readonly inference: ServiceDefinition;
  /** `grpc.health.v1.Health` (health.proto). */
  readonly health: ServiceDefinition;
}

function service(definition: ReturnType<typeof loadSync>, name: string): ServiceDefinition {
  const found = definition[name];
  if (found === undefined || "format" in found) throw new Error(`${name} is not a service in protocol/proto`);
  return found as ServiceDefinition;
}

/**
 * Parses our `.proto` files (found beside model_config.proto, which the build does not copy) with the loader
 * options the message types in protocol/grpc-types/longs-as-strings describe. Throws when a file is missing or does not parse.
 */
export function loadGrpcServiceDefinitions(): GrpcServiceDefinitions {
  const { protoDirectory } = modelConfigSchema();
  const definition = loadSync(
    [path.join(protoDirectory, "grpc_service.proto"), path.join(protoDirectory, "health.proto")],
    { ...GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS, includeDirs: [protoDirectory] },
  );
  return { inference: service(definition, "inference.GRPCInferenceService"), health: service(definition, "grpc.health.v1.Health") };
}
