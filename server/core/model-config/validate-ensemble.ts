import type { ModelConfig } from "./model-config";

export const ENSEMBLE_PLATFORM = "ensemble";

/** An ensemble tensor in Triton's data-flow graph (core src/model_config_utils.cc, EnsembleTensor). */
interface TensorNode {
  readonly name: string;
  /** Some step writes it. */
  isOutput: boolean;
  ready: boolean;
  /** The tensors the steps writing it read. */
  readonly previous: TensorNode[];
  /** The tensors written by the steps reading it. */
  readonly next: TensorNode[];
}

/** Triton's BuildEnsembleGraph: each step's fields set, each tensor written by one step, each step input mapped once. */
function buildGraph(config: ModelConfig): Map<string, TensorNode> {
  const graph = new Map<string, TensorNode>();
  const node = (name: string, isOutput: boolean): TensorNode => {
    const created: TensorNode = { name, isOutput, ready: false, previous: [], next: [] };
    graph.set(name, created);
    return created;
  };
  (config.ensemble_scheduling?.step ?? []).forEach((step, index) => {
    const where = `in step ${index} of ensemble '${config.name}'`;
    if (step.model_name === "") throw new Error(`must specify 'model_name' ${where}`);
    if (Object.keys(step.input_map).length === 0) throw new Error(`must specify 'input_map' ${where}`);
    if (Object.keys(step.output_map).length === 0) throw new Error(`must specify 'output_map' ${where}`);
    const written = Object.values(step.output_map).map((name) => {
      const existing = graph.get(name);
      if (existing === undefined) return node(name, true);
      if (existing.isOutput) throw new Error(`ensemble tensor '${name}' can appear in an output map only once for ensemble '${config.name}' step ${index}`);
      existing.isOutput = true;
      return existing;
    });
    // A protobuf map holds each step input once, so Triton's "mapped to multiple ensemble tensors" cannot happen here.
    for (const name of Object.values(step.input_map)) {
      const read = graph.get(name) ?? node(name, false);
      for (const output of written) {
        output.previous.push(read);
        read.next.push(output);
      }
    }
  });
  return graph;
}

/** Marks every tensor the ensemble inputs reach, a tensor once all the tensors its step reads are reached. */
function propagateReady(config: ModelConfig, graph: ReadonlyMap<string, TensorNode>): void {
  const queue: TensorNode[] = [];
  for (const input of config.input) {
    const node = graph.get(input.name);
    if (node === undefined) throw new Error(`ensemble input '${input.name}' for ensemble ${config.name}' is not used`);
    node.ready = true;
    queue.push(node);
  }
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const next of node.next) {
      if (next.ready || !next.previous.every((previous) => previous.ready)) continue;
      next.ready = true;
      queue.push(next);
    }
  }
}

/** Triton's reason an output is not written: the first unreached tensor up its chain of unreached sources. */
function notWritten(config: ModelConfig, output: TensorNode): Error {
  const message = `output '${output.name}' for ensemble '${config.name}' is not written`;
  const seen = new Set<string>();
  let last = output;
  for (let previous: readonly TensorNode[] = output.previous; ;) {
    const source = previous.find((node) => !node.ready && !seen.has(node.name));
    if (source === undefined) break;
    seen.add(source.name);
    last = source;
    previous = source.previous;
  }
  return new Error(last === output ? message : `${message}: at least one of its depending tensors, '${last.name}', is not connected`);
}

/**
 * Triton's ValidateEnsembleSchedulingConfig (core src/model_config_utils.cc): the config-only checks of an
 * ensemble, made before Triton looks for version directories or step models: no instance groups, optimization or
 * warmup, steps that name their model and map inputs and outputs, every ensemble input used, every output written
 * from the inputs, and no tensor left unused. Throws with Triton's messages.
 */
export function validateEnsembleScheduling(config: ModelConfig): void {
  if (config.platform !== ENSEMBLE_PLATFORM) throw new Error(`ensemble scheduling cannot be set for model '${config.name}' whose platform is not ${ENSEMBLE_PLATFORM}`);
  if (config.instance_group.length !== 0) throw new Error(`instance group should not be specified for ensemble '${config.name}'`);
  if (config.optimization !== undefined) throw new Error(`optimization should not be specified for ensemble '${config.name}'`);
  if (config.model_warmup.length !== 0) throw new Error(`model_warmup can not be specified for ensemble '${config.name}'`);
  if ((config.ensemble_scheduling?.step.length ?? 0) === 0) throw new Error(`must specify 'step' for ensemble '${config.name}'`);
  const graph = buildGraph(config);
  propagateReady(config, graph);
  const outputs = new Set<string>();
  for (const output of config.output) {
    const node = graph.get(output.name);
    if (node === undefined) throw new Error(`ensemble output '${output.name}' for ensemble ${config.name}' is not used`);
    if (!node.ready) throw notWritten(config, node);
    outputs.add(output.name);
  }
  for (const node of graph.values()) {
    if (!outputs.has(node.name) && (!node.ready || node.next.length === 0)) throw new Error(`ensemble tensor '${node.name}' is unused in ensemble '${config.name}'`);
  }
}
