/**
 * The server as a library: what a program that assembles or measures it in-process may use (the benchmarks do:
 * the gRPC transport comparison, the in-process ONNX Runtime baseline, the stress clients). The server itself
 * starts from main.ts; the tools see it only through server/core/index.ts and the published TypeScript-model
 * contract (server/backends/typescript/index.ts). Everything else under server/ is internal.
 */

// Assembling a server: options, the core, the frontends and what they share.
export { parseServerOptions, type ServerOptions } from "./cli/server-options";
export { applyV8HeapSettings } from "./memory/v8-heap-settings";
export { createCore, grpcServerOptions, httpServerOptions, type SharedFrontendParts } from "./server-wiring";
export { buildHttpServer } from "./frontends/http/http-server";
export { startGrpcServer } from "./frontends/grpc/grpc-server";
export { RequestBytesBudget } from "./frontends/request-bytes-budget";
export { SystemSharedMemory } from "./frontends/shared-memory/system-shared-memory";
export { LogSettings } from "./logging/log-settings";

// The gRPC frontend's pieces, for a transport that serves ModelInfer its own way.
export { loadGrpcServiceDefinitions } from "./frontends/grpc/grpc-service-definitions";
export { modelInfer, modelOf } from "./frontends/grpc/model-infer";
export { grpcErrorOf } from "./frontends/grpc/grpc-status";
export type { EncodedModelInferResponse } from "./frontends/grpc/infer-response-encoder";
export type { InferParameterMap } from "./frontends/grpc/request-parameters";
export { fieldHeader, INFER_RESPONSE_KEY, RAW_OUTPUT_CONTENTS_KEY } from "./frontends/grpc/framed-infer-response";
export { GrpcMessageAssembler } from "./frontends/grpc/grpc-message-assembler";
export { lengthPrefixed, PREFIX_BYTES } from "./frontends/grpc/grpc-message-framing";

// ONNX Runtime as the server configures it, for a baseline that runs the same session in-process.
export type { InstanceSpec } from "./backends/backend";
export { chooseExecutionProviders } from "./backends/onnxruntime/execution-providers";
export { sessionSettings } from "./backends/onnxruntime/onnxruntime-backend";
export { ortSessionOptions } from "./backends/onnxruntime/ort-worker-protocol";
export { countNvidiaGpus } from "./backends/gpu-detection";
