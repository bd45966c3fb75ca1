import type { handleUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { InferenceError } from "../../core/index";
import { CudaSharedMemory } from "../shared-memory/cuda-shared-memory";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import type { CudaSharedMemoryStatusRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/CudaSharedMemoryStatusRequest";
import type { SystemSharedMemoryRegisterRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/SystemSharedMemoryRegisterRequest";
import type { SystemSharedMemoryStatusRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/SystemSharedMemoryStatusRequest";
import type { SystemSharedMemoryUnregisterRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/SystemSharedMemoryUnregisterRequest";
import { unaryHandler } from "./unary-handler";

function size(field: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new InferenceError("INVALID_ARG", `shared memory registration: '${field}' ${text} is too large`);
  return value;
}

/** SystemSharedMemoryStatus / Register / Unregister over the regions the HTTP frontend shares, and the CUDA RPCs (no CUDA regions). */
export function systemSharedMemoryHandlers(sharedMemory: SystemSharedMemory, logger: Logger): UntypedServiceImplementation {
  const status: handleUnaryCall<SystemSharedMemoryStatusRequest__Output, unknown> = unaryHandler(logger, (request) => ({
    regions: Object.fromEntries(sharedMemory.status(request.name).map((region) => [region.name, region])),
  }));
  const register: handleUnaryCall<SystemSharedMemoryRegisterRequest__Output, unknown> = unaryHandler(logger, async (request) => {
    await sharedMemory.register(request.name, request.key, size("offset", request.offset), size("byte_size", request.byte_size));
    return {};
  });
  const unregister: handleUnaryCall<SystemSharedMemoryUnregisterRequest__Output, unknown> = unaryHandler(logger, async (request) => {
    sharedMemory.refuseIfDisabled();
    await sharedMemory.unregister(request.name);
    return {};
  });
  const cuda = new CudaSharedMemory(sharedMemory);
  return {
    SystemSharedMemoryStatus: status, SystemSharedMemoryRegister: register, SystemSharedMemoryUnregister: unregister,
    CudaSharedMemoryStatus: unaryHandler(logger, (request: CudaSharedMemoryStatusRequest__Output) => ({ regions: Object.fromEntries(cuda.status(request.name)) })),
    CudaSharedMemoryRegister: unaryHandler(logger, () => cuda.register()),
    CudaSharedMemoryUnregister: unaryHandler(logger, () => {
      cuda.unregister();
      return {};
    }),
  };
}
