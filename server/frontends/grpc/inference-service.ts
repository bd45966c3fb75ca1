import type { handleUnaryCall, sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { Cancellation, type InferenceCore, refuseRepositoryName } from "../../core/index";
import { answerTraceSetting, type RequestTrace, type Tracer } from "../../tracing/index";
import type { LogSettings } from "../../logging/log-settings";
import type { LogSettingsRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/LogSettingsRequest";
import type { ModelConfigRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelConfigRequest";
import type { ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import type { ModelInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";
import type { ModelMetadataRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelMetadataRequest";
import type { ModelReadyRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelReadyRequest";
import type { ModelStatisticsRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelStatisticsRequest";
import type { RepositoryIndexRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/RepositoryIndexRequest";
import type { RepositoryModelLoadRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/RepositoryModelLoadRequest";
import type { RepositoryModelUnloadRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/RepositoryModelUnloadRequest";
import type { TraceSettingRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/TraceSettingRequest";
import type { BudgetLease, RequestBytesBudget } from "../request-bytes-budget";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { systemSharedMemoryHandlers } from "./system-shared-memory-rpcs";
import { traceGrpcReceive, tracedCallback, traceSettingRequestOf, traceSettingResponseOf } from "./grpc-trace";
import { logSettingsRpc } from "./log-settings-rpc";
import { loadOverridesOf, unloadDependentsOf } from "./repository-parameters";
import { type FramedMessage, frameInferResponse } from "./framed-infer-response";
import { modelInferHeld, modelOf, refuseDecoupledModelInfer } from "./model-infer";
import { type ModelStreamInferCall, serveModelStreamInfer, type StreamInferSession } from "./model-stream-infer";
import { type GrpcInferRequestDecoder, type ModelInferMessage, UndecodedInferRequest } from "./off-thread-infer-request";
import { answerCall, unaryHandler } from "./unary-handler";

/** Empty strings are proto3's "not set". */
function optional(value: string): string | undefined {
  return value === "" ? undefined : value;
}

/** Cancelled when the client cancels the call (or its deadline passes), so queued work can be dropped. */
function callCancelled(call: ServerUnaryCall<unknown, unknown>): Cancellation {
  const cancellation = new Cancellation();
  call.once("cancelled", () => cancellation.abort());
  return cancellation;
}

/**
 * The handlers of `inference.GRPCInferenceService`, each answering as Triton does (CUDA shared memory: no regions,
 * register UNIMPLEMENTED). Open ModelStreamInfer calls are kept in `streams` until they end, so the server can finish
 * them when it shuts down.
 */
export function inferenceServiceHandlers(
  core: InferenceCore, logSettings: LogSettings, streams: Set<StreamInferSession>, tracer: Tracer, sharedMemory: SystemSharedMemory,
  budget: RequestBytesBudget, serializeInferResponse: (message: ModelInferResponse) => Buffer, decoder: GrpcInferRequestDecoder,
): UntypedServiceImplementation {
  const logger = logSettings.logger;
  const unary = <Request, Response>(handle: (request: Request, call: ServerUnaryCall<Request, Response>) => Response | Promise<Response>) =>
    unaryHandler(logger, handle);
  const runInfer = async (request: ModelInferMessage, call: ServerUnaryCall<unknown, FramedMessage>, trace: RequestTrace | undefined, lease: BudgetLease): Promise<FramedMessage> => {
    try {
      const model = modelOf(core, request);
      refuseDecoupledModelInfer(model);
      return await frameInferResponse(await modelInferHeld(model, sharedMemory, lease, request, callCancelled(call), trace), serializeInferResponse);
    } finally {
      lease.release();
    }
  };
  const serveInfer = (request: ModelInferMessage, call: ServerUnaryCall<unknown, FramedMessage>, callback: sendUnaryData<FramedMessage>, lease: BudgetLease): void => {
    const trace = tracer.sample(request.model_name);
    if (trace !== undefined) traceGrpcReceive(trace);
    answerCall(logger, call, trace === undefined ? callback : tracedCallback(trace, callback), runInfer(request, call, trace, lease));
  };
  const modelInferCall: handleUnaryCall<ModelInferRequest__Output | UndecodedInferRequest, FramedMessage> = (call, callback) => {
    const received = call.request;
    const lease = budget.lease();
    if (!(received instanceof UndecodedInferRequest)) return serveInfer(received, call, callback, lease);
    // A large message is decoded on a worker first: its model is known, and its request sampled, only then.
    decoder.decode(received, lease).then((request) => serveInfer(request, call, callback, lease), (error: unknown) => {
      lease.release();
      answerCall(logger, call, callback, Promise.reject(error));
    });
  };
  return {
    ServerLive: unary(() => ({ live: core.isLive() })),
    ServerReady: unary(() => ({ ready: core.isReady() })),
    ModelReady: unary((request: ModelReadyRequest__Output) => ({ ready: core.modelReady(request.name, optional(request.version)) })),
    ServerMetadata: unary(() => core.serverMetadata()),
    ModelMetadata: unary((request: ModelMetadataRequest__Output) => core.modelMetadata(request.name, optional(request.version))),
    // The core's config JSON is the protobuf JSON of inference.ModelConfig (proto field names, enum names,
    // 64-bit values as numbers or strings), which the message encoder reads as it is.
    ModelConfig: unary((request: ModelConfigRequest__Output) => ({ config: core.modelConfig(request.name, optional(request.version)) })),
    ModelStatistics: unary((request: ModelStatisticsRequest__Output) => ({ model_stats: core.statistics(optional(request.name), optional(request.version)) })),
    RepositoryIndex: unary((request: RepositoryIndexRequest__Output) => {
      refuseRepositoryName(request.repository_name);
      return { models: core.repositoryIndex(request.ready).map((entry) => ({ ...entry, version: entry.version ?? "" })) };
    }),
    RepositoryModelLoad: unary(async (request: RepositoryModelLoadRequest__Output) => {
      refuseRepositoryName(request.repository_name);
      await core.loadModel(request.model_name, loadOverridesOf(request.parameters));
      return {};
    }),
    RepositoryModelUnload: unary(async (request: RepositoryModelUnloadRequest__Output) => {
      refuseRepositoryName(request.repository_name);
      await core.unloadModel(request.model_name, unloadDependentsOf(request.parameters));
      return {};
    }),
    LogSettings: unary((request: LogSettingsRequest__Output) => logSettingsRpc(logSettings, request)),
    ...systemSharedMemoryHandlers(sharedMemory, logger),
    ModelInfer: modelInferCall,
    ModelStreamInfer: (call: ModelStreamInferCall) => {
      const session = serveModelStreamInfer(core, sharedMemory, budget, call, logger, tracer, serializeInferResponse, decoder);
      streams.add(session);
      void session.done.then(() => streams.delete(session));
    },
    TraceSetting: unary((request: TraceSettingRequest__Output) => traceSettingResponseOf(
      answerTraceSetting(tracer, core, optional(request.model_name), traceSettingRequestOf(request)),
    )),
  };
}
