import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * model.js of a TypeScript model that calls other models (BLS) as each request's parameters say, for the BLS tests:
 * - `route`: models to call in turn, comma-separated: this model calls the first with INPUT0 and passes the rest on
 *   as the callee's `route`; without it (or empty) the model echoes INPUT0 as OUTPUT0. OUTPUT0 is the callee's.
 * - `call_behave`: passed to the callee as its `behave` parameter (the probe model's misbehaviours).
 * - `exit_during_call`: the first call of the route is left pending; once a call to the model this names answered
 *   (so the first is queued in the server by then), the worker exits.
 * A failed call fails the request with the callee's code and the message `<callee>: <message>`.
 */
const CALLER_MODEL_JS = String.raw`
"use strict";
const { isModelCallError } = require("gcp-inference-stack/typescript-backend");

class CallerModel {
  async execute(requests, context) {
    return Promise.all(requests.map(async (request) => {
      const p = request.parameters;
      const input = request.inputs.INPUT0;
      const route = typeof p.route === "string" && p.route !== "" ? p.route.split(",") : [];
      if (route.length === 0) return { outputs: { OUTPUT0: input } };
      const parameters = { route: route.slice(1).join(",") };
      if (p.call_behave !== undefined) parameters.behave = p.call_behave;
      const options = { request, parameters, outputs: ["OUTPUT0"] };
      if (p.exit_during_call !== undefined) {
        context.infer(route[0], { INPUT0: input }, options).catch(() => undefined);
        await context.infer(p.exit_during_call, { INPUT0: input }, { request });
        process.exit(3);
      }
      try {
        const result = await context.infer(route[0], { INPUT0: input }, options);
        return { outputs: { OUTPUT0: result.outputs.OUTPUT0 } };
      } catch (error) {
        if (isModelCallError(error)) return { error: { code: error.code, message: error.model + ": " + error.message } };
        throw error;
      }
    }));
  }
}
module.exports = CallerModel;
`;

export interface CallerModelOptions {
  readonly name: string;
  /** Instances (default 1). */
  readonly count?: number;
  readonly parameters?: Readonly<Record<string, string>>;
  /** Whether the config has a dynamic batcher; default true. */
  readonly dynamicBatching?: boolean;
}

/** Writes `<repository>/<name>` with the caller model: INPUT0 -> OUTPUT0 (FP32, dims [-1]), batching up to 8 (dynamically unless told). */
export function writeCallerModel(repository: string, options: CallerModelOptions): void {
  const dir = path.join(repository, options.name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), CALLER_MODEL_JS);
  const parameters = Object.entries(options.parameters ?? {}).map(([key, value]) => `parameters { key: "${key}" value: { string_value: "${value}" } }`);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"',
    "max_batch_size: 8",
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    options.dynamicBatching === false ? "" : "dynamic_batching { }",
    `instance_group [ { count: ${options.count ?? 1} kind: KIND_CPU } ]`,
    ...parameters,
  ].join("\n"));
}

/**
 * model.js of a decoupled TypeScript model that streams another model's responses to its client (a streaming
 * pipeline), for the streamed BLS tests: COUNT (INT32) in, OUT (INT32) out, as the stream probe's. Parameters:
 * - `route`: the model it calls with `context.inferStream`, passing on COUNT and its other parameters;
 * - `take`: leave the loop after this many responses (then send the final flag);
 * - `report`: once a call fails, write `<report>.json` beside model.js with the ModelCallError's code and message;
 * - `exit_after`: the worker exits (code 3) once it forwarded this many responses.
 * A failed call ends the stream with an error response `<callee>: <message>` carrying the callee's code.
 */
const STREAMING_CALLER_MODEL_JS = String.raw`
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { isModelCallError } = require("gcp-inference-stack/typescript-backend");

class StreamingCaller {
  initialize(args) {
    this.dir = args.versionDirectory;
  }
  async execute(requests, context) {
    await Promise.all(requests.map((request) => this.forward(request, context)));
  }
  async forward(request, context) {
    const { route, take, report, exit_after: exitAfter, ...parameters } = request.parameters;
    const sender = request.responseSender;
    let forwarded = 0;
    try {
      for await (const result of context.inferStream(String(route), { COUNT: request.inputs.COUNT }, { request, parameters })) {
        // Once this request is cancelled its sends throw; reading on reaches the callee's CANCELLED error.
        if (!sender.isCancelled()) sender.send({ outputs: { OUT: result.outputs.OUT } });
        if (++forwarded === Number(exitAfter)) process.exit(3);
        if (forwarded === Number(take)) break;
      }
      sender.send(undefined, { final: true });
    } catch (error) {
      if (!isModelCallError(error)) throw error;
      if (report !== undefined) fs.writeFileSync(path.join(this.dir, String(report) + ".json"), JSON.stringify({ code: error.code, message: error.message }));
      if (!sender.isCancelled()) sender.send({ error: { code: error.code, message: error.model + ": " + error.message } }, { final: true });
    }
  }
}
module.exports = StreamingCaller;
`;

/** Writes `<repository>/<name>` with the streaming caller (decoupled, one instance, no batching); returns its version folder. */
export function writeStreamingCallerModel(repository: string, name: string): string {
  const dir = path.join(repository, name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), STREAMING_CALLER_MODEL_JS);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"',
    "max_batch_size: 0",
    'input [ { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    "model_transaction_policy { decoupled: true }",
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n"));
  return path.join(dir, "1");
}
