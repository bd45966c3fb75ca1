import { randomFillSync } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { BackendInstance } from "../../backends/backend";
import { type ExecutionContext, runExecutions } from "../scheduling/batch-execution";
import { batchSignature } from "../scheduling/batch-tensors";
import { type DataType, dataTypeFromConfig, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import type { ModelWarmup, ModelWarmupInput } from "../model-config/model-config";
import { isInside, type ModelDirectory, resolveInsideModel } from "./model-repository";
import type { ModelSignature } from "../model-config/model-signature";
import { OPERATOR_INPUT_LIMITS, type ValidatedRequest, validateRequest } from "../request/request-validation";
import { checkBytesElements, elementCount, type Tensor } from "../request/tensor";

/** One `model_warmup` entry, checked against the model and ready to execute. */
export interface WarmupSample {
  readonly name: string;
  /** Executions per instance: Triton's `count`, where 0 means once. */
  readonly runs: number;
  readonly request: ValidatedRequest;
}

/** Where `input_data_file` paths are resolved, as in Triton: `<model directory>/warmup/`. */
export const WARMUP_DIRECTORY = "warmup";

function sampleError(sample: ModelWarmup, detail: string): Error {
  return new Error(`model_warmup sample '${sample.name}': ${detail}`);
}

function readWarmupFile(modelDirectory: ModelDirectory, file: string, sample: ModelWarmup): Uint8Array {
  const joined = path.join(WARMUP_DIRECTORY, file);
  const inWarmup = path.relative(WARMUP_DIRECTORY, joined);
  if (path.isAbsolute(file) || inWarmup === "" || !isInside(WARMUP_DIRECTORY, joined)) {
    throw sampleError(sample, `input_data_file '${file}' must name a file inside the model's ${WARMUP_DIRECTORY}/ directory`);
  }
  let resolved: string;
  try {
    resolved = resolveInsideModel(modelDirectory.path, path.join(WARMUP_DIRECTORY, inWarmup), `input_data_file '${file}'`, modelDirectory.symlinks);
  } catch (error) {
    throw sampleError(sample, (error as Error).message);
  }
  try {
    return readFileSync(resolved);
  } catch (error) {
    throw sampleError(sample, `cannot read input_data_file ${WARMUP_DIRECTORY}/${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** One batch element's bytes for `input`, as zero_data, random_data or the contents of input_data_file. */
function elementData(name: string, input: ModelWarmupInput, datatype: DataType, modelDirectory: ModelDirectory, sample: ModelWarmup): Uint8Array {
  const elements = elementCount(input.dims);
  const elementSize = ELEMENT_BYTE_SIZE[datatype];
  if (input.input_data_file !== undefined && input.input_data_file !== "") {
    const data = readWarmupFile(modelDirectory, input.input_data_file, sample);
    if (elementSize === 0) {
      try {
        checkBytesElements(data, elements, name, Number.POSITIVE_INFINITY);
      } catch (error) {
        throw sampleError(sample, `${WARMUP_DIRECTORY}/${input.input_data_file}: ${(error as Error).message}`);
      }
    } else if (data.byteLength !== elements * elementSize) {
      throw sampleError(sample, `${WARMUP_DIRECTORY}/${input.input_data_file} has ${data.byteLength} bytes; input '${name}' with dims [${input.dims.join(",")}] of ${datatype} needs ${elements * elementSize}`);
    }
    return data;
  }
  // BYTES: every element is a zero length prefix, an empty string (Triton uses zero data for random strings too).
  const data = new Uint8Array(elementSize === 0 ? elements * 4 : elements * elementSize);
  if (input.random_data === true && elementSize > 0) {
    randomFillSync(data);
    if (datatype === "BOOL") for (let i = 0; i < data.length; i++) data[i]! &= 1;
  }
  return data;
}

function repeat(data: Uint8Array, times: number): Uint8Array {
  const out = new Uint8Array(data.byteLength * times);
  for (let i = 0; i < times; i++) out.set(data, i * data.byteLength);
  return out;
}

/**
 * Turns the config's `model_warmup` entries into requests, validated exactly as a client's would be (sequence
 * models name their control and implicit state inputs too). Throws naming the sample when one cannot run on this model.
 */
export function buildWarmupSamples(
  modelName: string, modelDirectory: ModelDirectory, warmups: readonly ModelWarmup[], signature: ModelSignature,
): WarmupSample[] {
  return warmups.map((sample) => {
    if (sample.batch_size < 1) throw sampleError(sample, "batch_size must be at least 1");
    if (signature.maxBatchSize === 0 && sample.batch_size !== 1) throw sampleError(sample, "batch_size must be 1 for a model that does not batch (max_batch_size 0)");
    if (signature.maxBatchSize > 0 && sample.batch_size > signature.maxBatchSize) {
      throw sampleError(sample, `batch_size ${sample.batch_size} exceeds the model's max_batch_size ${signature.maxBatchSize}`);
    }
    const modelInputs: Tensor[] = [];
    const controls = new Map<string, Tensor>();
    for (const [name, input] of Object.entries(sample.inputs)) {
      const datatype = dataTypeFromConfig(input.data_type);
      if (datatype === undefined) throw sampleError(sample, `input '${name}' has no valid data_type`);
      if (input.dims.some((dim) => dim < 0)) throw sampleError(sample, `input '${name}' dims [${input.dims.join(",")}] must all be concrete (no -1)`);
      const element = elementData(name, input, datatype, modelDirectory, sample);
      const batched = signature.maxBatchSize > 0;
      const tensor: Tensor = {
        name, datatype,
        shape: batched ? [sample.batch_size, ...input.dims] : [...input.dims],
        data: batched ? repeat(element, sample.batch_size) : element,
      };
      if (signature.controls.some((control) => control.name === name)) controls.set(name, tensor);
      else modelInputs.push(tensor);
    }
    const missingControls = signature.controls.filter((control) => !controls.has(control.name)).map((control) => `'${control.name}'`);
    if (missingControls.length > 0) throw sampleError(sample, `a sequence model's warmup must give its control input(s) ${missingControls.join(", ")}`);
    let request: ValidatedRequest;
    try {
      request = validateRequest({ modelName, inputs: modelInputs }, signature, OPERATOR_INPUT_LIMITS);
    } catch (error) {
      throw sampleError(sample, (error as Error).message);
    }
    for (const [name, tensor] of controls) request.inputs.set(name, tensor);
    return { name: sample.name, runs: Math.max(1, sample.count), request };
  });
}

/**
 * Runs every sample `runs` times on every instance, as Triton warms each instance before the model is ready.
 * Instances warm up side by side; each runs one execution at a time. Rejects with the first failure.
 */
export async function warmUpInstances(
  samples: readonly WarmupSample[], instances: readonly BackendInstance[], signature: ModelSignature,
): Promise<void> {
  if (samples.length === 0) return;
  // Warmup takes the first response, whatever the model's transaction policy: nothing waits for a stream's end.
  const context: ExecutionContext = { signature: batchSignature(signature), decoupled: false };
  await Promise.all(instances.map(async (instance, index) => {
    for (const sample of samples) {
      for (let run = 0; run < sample.runs; run++) {
        const { results } = await runExecutions(instance, [[{ request: sample.request, parameters: {} }]], context, process.hrtime.bigint());
        const result = results[0]![0];
        if (result instanceof Error) throw new Error(`model_warmup sample '${sample.name}' failed on instance ${index}: ${result.message}`, { cause: result });
      }
    }
  }));
}
