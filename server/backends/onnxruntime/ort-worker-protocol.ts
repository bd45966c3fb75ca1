import type { ModelIo } from "../backend";
import type { NamedTensor, StartupMessage } from "../instance-worker";

/** Session settings the main thread decides and the worker applies (all plain data: it crosses threads). */
export interface OrtSessionSettings {
  readonly modelPath: string;
  readonly executionProviders: readonly ({ name: string; deviceId?: number } | string)[];
  readonly intraOpNumThreads: number;
  readonly interOpNumThreads: number;
  readonly executionMode: "sequential" | "parallel";
  readonly graphOptimizationLevel: "disabled" | "basic" | "extended" | "all";
  readonly enableCpuMemArena: boolean;
  readonly enableMemPattern: boolean;
  /**
   * Whether ONNX Runtime's thread pools busy-wait between parallel sections. Off by default: the server's main
   * thread and other instances share the cores with the pool, and spinning takes their CPU.
   */
  readonly allowSpinning: boolean;
}

/** ONNX Runtime session options for these settings (shared by worker and main-thread sessions). */
export function ortSessionOptions(settings: OrtSessionSettings): Record<string, unknown> {
  const spinning = settings.allowSpinning ? "1" : "0";
  return {
    executionProviders: [...settings.executionProviders],
    intraOpNumThreads: settings.intraOpNumThreads,
    interOpNumThreads: settings.interOpNumThreads,
    executionMode: settings.executionMode,
    graphOptimizationLevel: settings.graphOptimizationLevel,
    enableCpuMemArena: settings.enableCpuMemArena,
    enableMemPattern: settings.enableMemPattern,
    extra: { session: { intra_op: { allow_spinning: spinning }, inter_op: { allow_spinning: spinning } } },
  };
}

/**
 * One input of a run as it crosses to the session's thread: the batch gathered on the main thread (one part, in a
 * buffer that moves with the message), or each request's part where it lies in memory both threads share, which
 * the thread gathers itself.
 */
export interface ThreadBatchInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly parts: readonly Uint8Array[];
}

export type WorkerRequest = { readonly id: number; readonly inputs: readonly ThreadBatchInput[]; readonly outputNames: readonly string[] };

/** The worker's start-up message carries the session's I/O description. */
export type OrtStartupMessage = StartupMessage<ModelIo>;

/**
 * The answer to one run. `inputBuffers` are the buffers of the inputs the main thread gathered, moved back once the
 * run no longer needs them, so that it gathers its next batch into memory it has used before (backends/spare-buffers.ts).
 */
export type OrtWorkerReply = { readonly inputBuffers: ArrayBuffer[] } & (
  | {
      readonly type: "result"; readonly id: number; readonly outputs: NamedTensor[];
      readonly computeInputNs: number; readonly computeInferNs: number; readonly computeOutputNs: number;
    }
  | { readonly type: "run-error"; readonly id: number; readonly message: string });

/**
 * Messages to the thread that hosts every WebGPU session of one device (ort-device-worker.ts): each names the
 * session it is for, as one thread serves several model instances.
 */
export type DeviceThreadRequest =
  | { readonly type: "open"; readonly sessionId: number; readonly settings: OrtSessionSettings }
  | { readonly type: "run"; readonly sessionId: number; readonly request: WorkerRequest }
  | { readonly type: "close"; readonly sessionId: number };

/** The device thread's answers: one per request, naming its session. */
export type DeviceThreadReply =
  | { readonly type: "opened"; readonly sessionId: number; readonly io: ModelIo }
  | { readonly type: "open-error"; readonly sessionId: number; readonly message: string }
  | { readonly type: "ran"; readonly sessionId: number; readonly reply: OrtWorkerReply }
  | { readonly type: "closed"; readonly sessionId: number };
