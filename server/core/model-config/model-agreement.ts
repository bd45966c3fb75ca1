import type { ModelIo, TensorSpec } from "../../backends/backend";
import { type DataType, dataTypeFromConfig, dataTypeToConfig } from "../../../protocol/datatypes";
import type { ModelConfig, ModelInput, ModelOutput } from "./model-config";

/** Tensors of the model that the server feeds and reads itself (sequence controls, implicit state), never the client. */
export interface ServerTensors {
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

/** Triton's ShapeToString. */
const shapeText = (dims: readonly number[]): string => `[${dims.join(",")}]`;

const namesText = (tensors: readonly { name: string }[]): string => tensors.map((t) => t.name).sort().join(", ");

/** Equal, or -1 in the model: Triton's CompareDimsSupported without compare_exact. */
const fits = (model: readonly number[], config: readonly number[]): boolean =>
  model.length === config.length && model.every((dim, i) => dim === -1 || dim === config[i]);

/**
 * Triton's CompareDimsSupported (backend src/backend_common.cc), its messages word for word: a batching model's
 * shape is -1 followed by the config dims; a model scalar takes config dims of 1s only.
 */
function checkDims(config: ModelConfig, name: string, model: readonly number[], dims: readonly number[]): void {
  const prefix = `model '${config.name}', tensor '${name}': `;
  if (model.length === 0) {
    if (dims.some((dim) => dim !== 1)) {
      throw new Error(
        `unable to load model '${config.name}', scalar tensor '${name}', should only provide 1 in the model configuration when the model ` +
        `doesn't support batching. Model configuration provided: ${shapeText(dims)}.`,
      );
    }
    return;
  }
  if (config.max_batch_size <= 0) {
    if (!fits(model, dims)) {
      throw new Error(`${prefix}the model expects ${model.length} dimensions (shape ${shapeText(model)}) but the model configuration specifies ${dims.length} dimensions (shape ${shapeText(dims)})`);
    }
    return;
  }
  if (model[0] !== -1) {
    throw new Error(
      `${prefix}for the model to support batching the shape should have at least 1 dimension and the first dimension must be -1; ` +
      `but shape expected by the model is ${shapeText(model)}`,
    );
  }
  const full = [-1, ...dims];
  if (!fits(model, full)) {
    throw new Error(
      `${prefix}the model expects ${model.length} dimensions (shape ${shapeText(model)}) but the model configuration specifies ${full.length} dimensions ` +
      `(an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape ${shapeText(full)})`,
    );
  }
}

/** One config tensor against the model's: Triton's ONNX Runtime backend (src/onnxruntime.cc, ValidateInputs / ValidateOutputs). */
function checkTensor(config: ModelConfig, kind: "input" | "output", tensor: ModelInput | ModelOutput, actual: readonly TensorSpec[]): void {
  const model = actual.find((t) => t.name === tensor.name);
  if (model === undefined) throw new Error(`unexpected inference ${kind} '${tensor.name}', allowed ${kind}s are: ${namesText(actual)}`);
  if (dataTypeFromConfig(tensor.data_type) !== model.datatype) {
    throw new Error(
      `unable to load model '${config.name}', configuration expects datatype ${tensor.data_type} for ${kind} '${tensor.name}', ` +
      `model provides ${dataTypeToConfig(model.datatype as DataType)}`,
    );
  }
  checkDims(config, tensor.name, model.shape, tensor.reshape !== undefined ? tensor.reshape.shape : tensor.dims);
}

/**
 * Checks that a completed config and the model file agree, in the order and words of Triton's ONNX Runtime backend:
 * the number of inputs, then each input and output (known to the model, same data type, dims that fit the model's
 * shape). Tensors the server feeds or reads itself count as the config's. A mismatch throws with the reason the
 * model becomes UNAVAILABLE for.
 */
export function checkAgainstModel(config: ModelConfig, io: ModelIo, server: ServerTensors): void {
  const expectedInputs = config.input.length + server.inputs.length;
  if (expectedInputs !== io.inputs.length) {
    throw new Error(`unable to load model '${config.name}', configuration expects ${expectedInputs} inputs, model provides ${io.inputs.length}`);
  }
  for (const input of config.input) checkTensor(config, "input", input, io.inputs);
  for (const output of config.output) checkTensor(config, "output", output, io.outputs);
  for (const name of server.outputs) {
    if (!io.outputs.some((t) => t.name === name)) throw new Error(`state output '${name}' is not an output of the model, which has ${namesText(io.outputs)}`);
  }
  const missing = io.inputs.filter((t) => !config.input.some((i) => i.name === t.name) && !server.inputs.includes(t.name));
  if (missing.length > 0) throw new Error(`model requires input(s) ${namesText(missing)} that the configuration does not list`);
}
