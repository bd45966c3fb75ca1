import { type ConfigDataType } from "../../protocol/datatypes";

/** One `input` or `output` entry of a Triton model configuration. */
export interface ModelTensorConfig {
  readonly name: string;
  readonly dataType: ConfigDataType;
  /** Dimensions without the batch dimension when `maxBatchSize > 0`; -1 marks a variable dimension. */
  readonly dims: readonly number[];
  readonly format?: "FORMAT_NCHW" | "FORMAT_NHWC";
  /** Output only: a file in the model directory with one class label per line. */
  readonly labelFilename?: string;
}

/** The subset of Triton's `ModelConfig` that the example repository uses. */
export interface ModelConfigSpec {
  readonly name: string;
  /** Exactly one of `platform` (e.g. `onnxruntime_onnx`) and `backend` (e.g. `identity`) is set. */
  readonly runtime: { readonly platform: string } | { readonly backend: string };
  readonly maxBatchSize: number;
  readonly inputs: readonly ModelTensorConfig[];
  readonly outputs: readonly ModelTensorConfig[];
  /** Present turns on the dynamic batcher; an empty object is `dynamic_batching { }` (Triton's defaults). */
  readonly dynamicBatching?: { readonly maxQueueDelayUs?: number };
  readonly instanceGroups?: readonly { readonly count: number; readonly kind: "KIND_CPU" | "KIND_GPU" }[];
  /** One `model_warmup` sample of zeros for every input, run before the model is ready. */
  readonly warmup?: { readonly name: string; readonly batchSize: number };
  /** Model `parameters` (string values), e.g. a backend's settings. */
  readonly parameters?: Readonly<Record<string, string>>;
  /** `model_transaction_policy { decoupled: true }`: the model sends any number of responses per request. */
  readonly decoupled?: boolean;
  /** An ensemble's `ensemble_scheduling.step`s (with `runtime: { platform: "ensemble" }`); maps are model tensor -> ensemble tensor. */
  readonly ensembleSteps?: readonly EnsembleStepSpec[];
}

export interface EnsembleStepSpec {
  readonly modelName: string;
  /** -1 (the default) is the latest ready version. */
  readonly modelVersion?: number;
  readonly inputMap: Readonly<Record<string, string>>;
  readonly outputMap: Readonly<Record<string, string>>;
}

const INDENT = "  ";

function quoted(text: string): string {
  // JSON's escapes (\", \\, \n, \uXXXX for controls) are a subset of what protobuf text format accepts.
  return JSON.stringify(text);
}

/** A `field [ {...}, {...} ]` list of messages, each given as its body lines, in Triton's own layout. */
function messageList(field: string, bodies: readonly (readonly string[])[]): string[] {
  const lines = [`${field} [`];
  bodies.forEach((body, index) => {
    lines.push(`${INDENT}{`, ...body.map((line) => `${INDENT}${INDENT}${line}`));
    lines.push(index < bodies.length - 1 ? `${INDENT}},` : `${INDENT}}`);
  });
  lines.push("]");
  return lines;
}

function mapEntries(field: string, map: Readonly<Record<string, string>>): string[] {
  return Object.entries(map).map(([key, value]) => `${field} { key: ${quoted(key)} value: ${quoted(value)} }`);
}

function indented(lines: readonly string[]): string[] {
  return lines.map((line) => `${INDENT}${line}`);
}

function tensorBody(tensor: ModelTensorConfig): string[] {
  const body = [`name: ${quoted(tensor.name)}`, `data_type: ${tensor.dataType}`];
  if (tensor.format !== undefined) body.push(`format: ${tensor.format}`);
  body.push(`dims: [ ${tensor.dims.join(", ")} ]`);
  if (tensor.labelFilename !== undefined) body.push(`label_filename: ${quoted(tensor.labelFilename)}`);
  return body;
}

/**
 * Renders a model configuration as `config.pbtxt` (protobuf text format of Triton's `ModelConfig`), laid
 * out the way Triton's example repository writes it so the files read like any other Triton model.
 */
export function renderModelConfigText(config: ModelConfigSpec): string {
  const lines = [`name: ${quoted(config.name)}`];
  lines.push(
    "platform" in config.runtime
      ? `platform: ${quoted(config.runtime.platform)}`
      : `backend: ${quoted(config.runtime.backend)}`,
  );
  lines.push(`max_batch_size: ${config.maxBatchSize}`);
  lines.push(...messageList("input", config.inputs.map(tensorBody)));
  lines.push(...messageList("output", config.outputs.map(tensorBody)));
  if (config.decoupled === true) lines.push(`model_transaction_policy {\n${INDENT}decoupled: true\n}`);
  if (config.dynamicBatching !== undefined) {
    const delayUs = config.dynamicBatching.maxQueueDelayUs;
    lines.push(
      delayUs === undefined
        ? "dynamic_batching { }"
        : `dynamic_batching {\n${INDENT}max_queue_delay_microseconds: ${delayUs}\n}`,
    );
  }
  if (config.instanceGroups !== undefined) {
    lines.push(...messageList("instance_group", config.instanceGroups.map((group) => [
      `count: ${group.count}`,
      `kind: ${group.kind}`,
    ])));
  }
  for (const [key, value] of Object.entries(config.parameters ?? {})) {
    lines.push("parameters {", `${INDENT}key: ${quoted(key)}`, `${INDENT}value: { string_value: ${quoted(value)} }`, "}");
  }
  if (config.ensembleSteps !== undefined) {
    const steps = messageList("step", config.ensembleSteps.map((step) => [
      `model_name: ${quoted(step.modelName)}`, `model_version: ${step.modelVersion ?? -1}`,
      ...mapEntries("input_map", step.inputMap), ...mapEntries("output_map", step.outputMap),
    ]));
    lines.push("ensemble_scheduling {", ...indented(steps), "}");
  }
  if (config.warmup !== undefined) {
    const inputs = config.inputs.flatMap((tensor) => [
      "inputs {", `${INDENT}key: ${quoted(tensor.name)}`, `${INDENT}value {`,
      `${INDENT}${INDENT}data_type: ${tensor.dataType}`, `${INDENT}${INDENT}dims: [ ${tensor.dims.join(", ")} ]`, `${INDENT}${INDENT}zero_data: true`,
      `${INDENT}}`, "}",
    ]);
    lines.push(...messageList("model_warmup", [[`name: ${quoted(config.warmup.name)}`, `batch_size: ${config.warmup.batchSize}`, ...inputs]]));
  }
  return `${lines.join("\n")}\n`;
}
