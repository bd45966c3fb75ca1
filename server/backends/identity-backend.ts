import { setTimeout as sleep } from "node:timers/promises";
import type { Backend, BackendExecution, BackendInstance, ExecutionTimes, InstanceSpec, TensorMap } from "./backend";
import { type BatchRun, executeBatches, gatherInputs } from "./batch-io";

/**
 * Triton's identity backend, in TypeScript: output i is input i (in config order). The model parameter
 * `execute_delay_ms` makes every execution take that long, which lets tests and benchmarks observe queueing,
 * batching and instance parallelism without a real model. Also serves datatypes ONNX Runtime's JS binding
 * cannot (BF16).
 */
export class IdentityBackend implements Backend {
  readonly name = "identity";
  readonly usesGpu = false;
  readonly runsModelCode = false;

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    const delay = spec.parameters["execute_delay_ms"];
    const delayMs = delay === undefined ? 0 : Number(delay);
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error(`execute_delay_ms must be a non-negative number, got '${delay}'`);
    return new IdentityInstance(delayMs, configOutputNames(spec.modelConfig));
  }
}

/** The config's output names, in its order: output i is input i. */
function configOutputNames(config: InstanceSpec["modelConfig"]): string[] {
  const outputs = config["output"];
  if (!Array.isArray(outputs)) return [];
  return outputs.map((output: unknown) => String((output as { name?: unknown }).name));
}

class IdentityInstance implements BackendInstance {
  readonly io = undefined;
  readonly executionThread = "main";
  readonly executionProvider = "cpu";
  readonly groupsExecutions = false;
  constructor(private readonly delayMs: number, private readonly outputNames: readonly string[]) {}

  execute(executions: readonly BackendExecution[]): Promise<(ExecutionTimes | undefined)[]> {
    return executeBatches(executions, gatherInputs, (inputs) => this.#run(inputs));
  }

  async #run(inputs: TensorMap): Promise<BatchRun> {
    const start = process.hrtime.bigint();
    if (this.delayMs > 0) await sleep(this.delayMs);
    // Gathering copied each execution's inputs into buffers of their own, which nothing reads or writes after the
    // execution: handing them back as outputs spares a copy of every input (64 MiB of main-thread copying for one
    // request at the default limits, which health checks and other requests would wait for).
    const sources = [...inputs.values()];
    const outputs: TensorMap = new Map();
    this.outputNames.forEach((name, index) => {
      const source = sources[index] ?? sources[0];
      if (source === undefined) throw new Error(`identity model has no input to copy to output '${name}'`);
      outputs.set(name, { datatype: source.datatype, shape: source.shape, data: source.data });
    });
    return { outputs, computeInputNs: 0, computeInferNs: Number(process.hrtime.bigint() - start), computeOutputNs: 0 };
  }

  async close(): Promise<void> {}
}
