import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * model.js of a TypeScript-backend model that misbehaves on request, for the backend's and the core's tests.
 * Every output `OUTPUTn` echoes input `INPUTn`; `INFO` (BYTES, one element per request) is JSON with what the
 * model saw: its initialize() args, the request's parameters, the typed array class of every input, the
 * requested outputs and the batch size. The request parameter `behave` picks a misbehaviour:
 * - `invalid`: this request fails with INVALID_ARG; `internal`: with an error without a code (INTERNAL)
 * - `throw`: execute() throws (the whole batch fails); `exit`: process.exit(3) in execute()
 * - `throw-later`: answers, then throws from a timer (the worker dies after the answer)
 * - `bad-output`: returns OUTPUT0 as the wrong typed array; `bad-code`: an error code that does not exist
 * - `grow`: allocates JS arrays until the worker's heap limit stops it
 * - execute() never returns: `spin` (a busy loop), `hang` (a promise that never settles), `wait` (Atomics.wait)
 * - `kill`: process.kill(process.pid, "SIGTERM") in execute(); `limits`: fails with INVALID_ARG, the message
 *   being the worker's resourceLimits as JSON
 * - `pause`: blocks its worker thread for 300 ms, then answers (requests sent meanwhile wait in the queue)
 * The config parameter `init_fail` makes initialize() throw; finalize() writes `finalized` beside model.js.
 */
const PROBE_MODEL_JS = String.raw`
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { float32ToFp16 } = require("gcp-inference-stack/typescript-backend");

class ProbeModel {
  initialize(args) {
    if (args.modelConfig.parameters.init_fail !== undefined) throw new Error(args.modelConfig.parameters.init_fail.string_value);
    this.args = { ...args, modelConfig: { name: args.modelConfig.name, max_batch_size: args.modelConfig.max_batch_size } };
    this.fp16OfOne = float32ToFp16(1);
  }
  execute(requests) {
    const behaviours = requests.map((r) => r.parameters.behave);
    if (behaviours.includes("throw")) throw new Error("execute exploded");
    if (behaviours.includes("exit")) process.exit(3);
    if (behaviours.includes("throw-later")) setTimeout(() => { throw new Error("thrown from a timer"); }, 20);
    if (behaviours.includes("spin")) for (;;);
    if (behaviours.includes("hang")) return new Promise(() => undefined);
    if (behaviours.includes("wait")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    if (behaviours.includes("pause")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    if (behaviours.includes("kill")) process.kill(process.pid, "SIGTERM");
    if (behaviours.includes("grow")) { const hoard = []; for (;;) hoard.push(new Array(100000).fill(Math.random())); }
    return requests.map((request) => {
      const behave = request.parameters.behave;
      if (behave === "invalid") return { error: { code: "INVALID_ARG", message: "the model refuses this request" } };
      if (behave === "internal") return { error: { message: "the model failed on this request" } };
      if (behave === "limits") return { error: { code: "INVALID_ARG", message: JSON.stringify(require("node:worker_threads").resourceLimits) } };
      if (behave === "bad-code") return { error: { code: "NOPE", message: "odd" } };
      const outputs = {};
      const types = {};
      let batch = 1;
      for (const [name, tensor] of Object.entries(request.inputs)) {
        types[name] = tensor.data.constructor.name;
        batch = tensor.shape[0];
        outputs[name.replace("INPUT", "OUTPUT")] = behave === "bad-output" ? { ...tensor, data: new Float64Array(tensor.data.length) } : tensor;
      }
      const parameters = Object.fromEntries(Object.entries(request.parameters).map(([k, v]) => [k, typeof v === "bigint" ? v + "n" : v]));
      const info = JSON.stringify({ args: this.args, parameters, types, requestedOutputs: request.requestedOutputs, fp16OfOne: this.fp16OfOne });
      outputs.INFO = { datatype: "BYTES", shape: [batch, 1], data: Array.from({ length: batch }, () => info) };
      return { outputs };
    });
  }
  finalize() {
    fs.writeFileSync(path.join(this.args.versionDirectory, "finalized"), "yes");
  }
}
module.exports = ProbeModel;
`;

export interface ProbeModelOptions {
  readonly name: string;
  readonly parameters?: Readonly<Record<string, string>>;
  /** Default 8. */
  readonly maxBatchSize?: number;
  /** The dynamic batcher's max_queue_delay_microseconds; default none. */
  readonly maxQueueDelayUs?: number;
  /** Whether the config has a dynamic batcher; default true. */
  readonly dynamicBatching?: boolean;
}

/** Writes `<repository>/<name>` with the probe model: INPUT0 -> OUTPUT0 (dims [-1]) and INFO, batching (up to 8 by default, dynamically unless told). */
export function writeProbeModel(repository: string, options: ProbeModelOptions): void {
  const dir = path.join(repository, options.name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), PROBE_MODEL_JS);
  const parameters = Object.entries(options.parameters ?? {}).map(([key, value]) => `parameters { key: "${key}" value: { string_value: "${value}" } }`);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"',
    `max_batch_size: ${options.maxBatchSize ?? 8}`,
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "INFO" data_type: TYPE_STRING dims: [ 1 ] } ]',
    options.dynamicBatching === false ? "" : `dynamic_batching { ${options.maxQueueDelayUs === undefined ? "" : `max_queue_delay_microseconds: ${options.maxQueueDelayUs}`} }`,
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
    ...parameters,
  ].join("\n"));
}
