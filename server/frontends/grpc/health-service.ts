import type { UntypedServiceImplementation } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { InferenceCore } from "../../core/index";
import type { HealthCheckResponse } from "../../../protocol/grpc-types/longs-as-strings/grpc/health/v1/HealthCheckResponse";
import { unaryHandler } from "./unary-handler";

/**
 * `grpc.health.v1.Health/Check` backed by server readiness, whatever service is named, as Triton does (so a
 * load balancer's gRPC health check follows the same rule as `/v2/health/ready`). Watch is not served.
 */
export function healthServiceHandlers(core: InferenceCore, logger: Logger): UntypedServiceImplementation {
  return {
    Check: unaryHandler(logger, (): HealthCheckResponse => ({ status: core.isReady() ? "SERVING" : "NOT_SERVING" })),
  };
}
