import type { BackendTensor, ModelIo } from "../backend";

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
}

export interface NamedTensor extends BackendTensor {
  readonly name: string;
}

export type WorkerRequest = { readonly id: number; readonly inputs: NamedTensor[]; readonly outputNames: readonly string[] };

export type WorkerMessage =
  | { readonly type: "ready"; readonly io: ModelIo }
  | { readonly type: "load-error"; readonly message: string }
  | {
      readonly type: "result"; readonly id: number; readonly outputs: NamedTensor[];
      readonly computeInputNs: number; readonly computeInferNs: number; readonly computeOutputNs: number;
    }
  | { readonly type: "run-error"; readonly id: number; readonly message: string };
