import { asInferenceError, InferenceError, requestLogPrefix } from "../errors";
import type { InferRequest, InferResponse, OutputTensor } from "../request/inference-request";
import type { ModelConfig } from "../model-config/model-config";
import type { ModelSignature } from "../model-config/model-signature";
import type { ValidatedRequest } from "../request/request-validation";
import type { RequestScheduler, ScheduleOptions } from "./request-scheduler";
import type { Tensor } from "../request/tensor";
import type { ExecutionTimings } from "../repository/model-statistics";
import { ensembleTensorShape } from "./ensemble-tensor-shape";
import { reshapeBatchedShape } from "./reshape-shape";
import { EnsembleTensorTypes } from "./ensemble-tensor-types";

/** What an ensemble needs from the server: its composing models' signatures, and a way to run them. */
export interface ComposingModels {
  /** The signature of the version a step would use (-1: the latest ready one); throws when it is not servable. */
  signatureOf(name: string, version: number): ModelSignature;
  infer(request: InferRequest): Promise<InferResponse>;
}

/** One `ensemble_scheduling.step`, checked against its model: composing tensor name -> ensemble tensor name. */
export interface EnsembleStepPlan {
  readonly modelName: string;
  /** Undefined: the latest ready version at request time. */
  readonly modelVersion: string | undefined;
  readonly inputs: ReadonlyMap<string, string>;
  readonly outputs: ReadonlyMap<string, string>;
  /** The step model batches (`max_batch_size` > 0). */
  readonly batching: boolean;
  /** The step model's config dims of each input it takes, without the batch dimension. */
  readonly inputDims: ReadonlyMap<string, readonly number[]>;
}

/** An ensemble tensor as the steps pass it on, with the batch size of what produced it (0: no batch dimension). */
interface EnsembleTensor {
  readonly tensor: Tensor;
  readonly batchSize: number;
}

/** The composing models an ensemble config names, in step order (for loading them first). */
export function ensembleDependencies(config: ModelConfig): string[] {
  return [...new Set(config.ensemble_scheduling?.step.map((step) => step.model_name) ?? [])];
}

/**
 * Checks an ensemble config against its step models the way Triton does at load (the data flow was checked with the
 * config, validate-ensemble.ts): every step's model is servable and takes the tensors mapped to it, no step writes
 * an ensemble input, datatypes and shapes agree wherever a tensor is named, and a batching ensemble only composes
 * models that batch at least as far or not at all.
 */
export function planEnsemble(config: ModelConfig, signature: ModelSignature, composing: ComposingModels): EnsembleStepPlan[] {
  const steps = config.ensemble_scheduling?.step ?? [];
  // Triton's ValidateEnsembleConfig and ValidateTensorMapping (core src/ensemble_scheduler/ensemble_utils.cc): the
  // ensemble's own tensors first (their `reshape` where they have one), then each step's, in step order.
  const types = new EnsembleTensorTypes(config.name);
  const ensembleBatching = signature.maxBatchSize > 0;
  for (const tensor of [...signature.inputs, ...signature.outputs]) types.add(tensor.name, config.name, ensembleBatching, tensor.datatype, tensor.reshape ?? tensor.dims);
  return steps.map((step, index): EnsembleStepPlan => {
    // The repository has checked that each step's model serves (ensemble-dependency-check.ts).
    const stepSignature = composing.signatureOf(step.model_name, step.model_version);
    // A batching ensemble may compose non-batching models: the steps' shapes gain or lose the batch dimension at
    // run time.
    if (stepSignature.maxBatchSize !== 0 && stepSignature.maxBatchSize < signature.maxBatchSize) {
      throw new Error(
        `ensemble ${config.name} allows maximum batch size ${signature.maxBatchSize}, but it contains model ${step.model_name} ` +
        `which only allows maximum batch size to be ${stepSignature.maxBatchSize}`,
      );
    }
    const batching = stepSignature.maxBatchSize > 0;
    const inEnsemble = `in ensemble ${config.name}, `;
    for (const [name, tensor] of Object.entries(step.input_map)) {
      if (!stepSignature.inputs.some((input) => input.name === name)) {
        throw new Error(`${inEnsemble}ensemble tensor ${tensor} is mapping to non-existing input ${name} in model ${step.model_name}`);
      }
    }
    for (const input of stepSignature.inputs) {
      const tensor = step.input_map[input.name];
      if (tensor !== undefined) types.add(tensor, step.model_name, batching, input.datatype, input.dims);
      else if (!input.optional) throw new Error(`${inEnsemble}input ${input.name} in model ${step.model_name} is not mapped to any ensemble tensors`);
    }
    for (const [name, tensor] of Object.entries(step.output_map)) {
      const output = stepSignature.outputs.find((o) => o.name === name);
      if (output === undefined) throw new Error(`${inEnsemble}ensemble tensor ${tensor} is mapped from non-existing output ${name} in model ${step.model_name}`);
      types.add(tensor, step.model_name, batching, output.datatype, output.dims);
      if (signature.inputs.some((input) => input.name === tensor)) {
        throw new Error(`ensemble_scheduling: step ${index + 1} (model '${step.model_name}'): ensemble tensor '${tensor}' is already produced by the ensemble's inputs`);
      }
    }
    return {
      modelName: step.model_name, modelVersion: step.model_version < 0 ? undefined : String(step.model_version),
      inputs: new Map(Object.entries(step.input_map)), outputs: new Map(Object.entries(step.output_map)),
      batching, inputDims: new Map(stepSignature.inputs.map((input) => [input.name, input.dims])),
    };
  });
}

/**
 * Triton's ensemble scheduler: runs each step as soon as its input tensors exist, as an ordinary request to the
 * step's model (so that model's own batching, queue policy and statistics apply), steps with independent inputs
 * side by side, and answers with the ensemble's outputs. The first failing step fails the request.
 */
export class EnsembleScheduler implements RequestScheduler {
  readonly #name: string;
  readonly #steps: readonly EnsembleStepPlan[];
  readonly #signature: ModelSignature;
  readonly #composing: ComposingModels;
  readonly #executed: (timings: ExecutionTimings) => void;
  #inFlight = 0;
  #closed = false;
  #drained: (() => void) | undefined;

  /** `executed`: where an ensemble request that succeeded is counted, as one execution of its batch size. */
  constructor(name: string, steps: readonly EnsembleStepPlan[], signature: ModelSignature, composing: ComposingModels, executed: (timings: ExecutionTimings) => void) {
    this.#name = name;
    this.#steps = steps;
    this.#signature = signature;
    this.#composing = composing;
    this.#executed = executed;
  }

  /** Requests inside the ensemble; their steps wait in the composing models' own queues. */
  get pendingCount(): number {
    return this.#inFlight;
  }

  get queueDepth(): number {
    return 0;
  }

  close(): Promise<void> {
    this.#closed = true;
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => (this.#drained = resolve));
  }

  /** Nothing waits here: the steps' queued requests are refused by the composing models' own schedulers. */
  refuseQueued(): void {
    this.#closed = true;
  }

  /** Runs the steps; the ensemble's one response (its outputs, or the first step's error) goes to the sink. */
  enqueue(request: ValidatedRequest, options: ScheduleOptions): void {
    // As Triton's EnsembleScheduler::Enqueue, before the steps take the tensors on.
    options.trace?.tensors("TENSOR_QUEUE_INPUT", request.inputs.values());
    this.#run(request, options).then((outputs) => options.sink.send(outputs, true), (error: unknown) => options.sink.send(asInferenceError(error), true));
  }

  async #run(request: ValidatedRequest, options: ScheduleOptions): Promise<OutputTensor[]> {
    if (this.#closed) throw new InferenceError("UNAVAILABLE", "model is unloading");
    this.#inFlight++;
    try {
      const batching = this.#signature.maxBatchSize > 0;
      const tensors = new Map<string, EnsembleTensor>([...request.inputs].map(([name, tensor]) => [name, { tensor: this.#asSteps(tensor, batching), batchSize: batching ? request.batchSize : 0 }]));
      const waiting = new Set(this.#steps);
      const running = new Map<EnsembleStepPlan, Promise<{ step: EnsembleStepPlan; outputs: readonly OutputTensor[]; batchSize: number }>>();
      while (waiting.size > 0 || running.size > 0) {
        for (const step of waiting) {
          if (![...step.inputs.values()].every((tensor) => tensors.has(tensor))) continue;
          waiting.delete(step);
          const run = this.#runStep(step, tensors, options).then((result) => ({ step, ...result }));
          run.catch(() => undefined); // a step failing after another already failed the request is not unhandled
          running.set(step, run);
        }
        if (running.size === 0) {
          // Steps wait on tensors nothing will produce (an optional input left out): Triton's words.
          throw new InferenceError(
            "INVALID_ARG",
            this.#failure(`${requestLogPrefix(options.id)}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`),
          );
        }
        const { step, outputs, batchSize } = await Promise.race(running.values());
        running.delete(step);
        for (const output of outputs) {
          const name = step.outputs.get(output.name);
          if (name !== undefined) tensors.set(name, { tensor: { ...output, name }, batchSize });
        }
      }
      // Triton counts a successful ensemble request as one execution of its batch size (at least 1) in the
      // ensemble's own statistics (core src/ensemble_scheduler/ensemble_scheduler.cc, RequestTracker). Compute
      // durations stay with the steps' models: their requests do not report them back here.
      this.#executed({ batchSize: Math.max(1, batching ? request.batchSize : 0), requestCount: 1, computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 });
      return this.#ensembleOutputs(tensors, batching);
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) this.#drained?.();
    }
  }

  /**
   * An ensemble input as the steps see it: in its `reshape` shape where it has one, as Triton's request holds an
   * input once normalized (core src/infer_request.cc) and the ensemble passes it on (ensemble_scheduler.cc).
   */
  #asSteps(tensor: Tensor, batching: boolean): Tensor {
    const input = this.#signature.inputs.find((i) => i.name === tensor.name);
    if (input?.reshape === undefined) return tensor;
    return { ...tensor, shape: reshapeBatchedShape(batching, input.dims, tensor.shape, input.reshape) };
  }

  /**
   * Every ensemble tensor, those the ensemble outputs in the shape its own batching gives them (Triton's rule), then
   * from their `reshape` back to `dims`, as Triton's response does for any model (core src/infer_response.cc).
   */
  #ensembleOutputs(tensors: ReadonlyMap<string, EnsembleTensor>, batching: boolean): Tensor[] {
    return [...tensors.values()].map(({ tensor, batchSize }) => {
      const output = this.#signature.outputs.find((o) => o.name === tensor.name);
      if (output === undefined) return tensor;
      const shape = ensembleTensorShape(output.reshape ?? output.dims, batching, batchSize, tensor.shape);
      return { ...tensor, shape: output.reshape === undefined ? shape : reshapeBatchedShape(batching, output.reshape, shape, output.dims) };
    });
  }

  async #runStep(step: EnsembleStepPlan, tensors: ReadonlyMap<string, EnsembleTensor>, options: ScheduleOptions): Promise<{ outputs: readonly OutputTensor[]; batchSize: number }> {
    const inputs = [...step.inputs].map(([name, tensorName]): Tensor => {
      const { tensor, batchSize } = tensors.get(tensorName)!;
      return { ...tensor, name, shape: ensembleTensorShape(step.inputDims.get(name) ?? [], step.batching, batchSize, tensor.shape) };
    });
    // As Triton's step request, whose batch size its outputs carry on: the first input's batch dimension, none
    // when the model does not batch.
    const batchSize = step.batching ? (inputs[0]?.shape[0] ?? 0) : 0;
    try {
      // As Triton, each step carries the ensemble request's id and parameters: priority, timeout, and a sequence's
      // id and start/end flags for sequence models among the steps.
      const response = await this.#composing.infer({
        modelName: step.modelName, modelVersion: step.modelVersion, id: options.id, parameters: options.parameters, signal: options.signal, trace: options.trace?.child(), chain: options.chain,
        inputs, outputs: [...step.outputs.keys()].map((name) => ({ name })),
      });
      return { outputs: response.outputs, batchSize };
    } catch (error) {
      const failure = asInferenceError(error);
      // The ensemble exists; a composing model that went away makes it unavailable, not unknown.
      const code = failure.code === "NOT_FOUND" ? "UNAVAILABLE" : failure.code;
      throw new InferenceError(code, this.#failure(failure.message), { cause: error });
    }
  }

  /** Triton's EnsembleContext::FinishEnsemble names the ensemble, not the step (a step's error names its model). */
  #failure(message: string): string {
    return `in ensemble '${this.#name}', ${message}`;
  }
}
