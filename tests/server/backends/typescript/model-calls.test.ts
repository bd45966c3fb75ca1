import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendInstance, BackendRequest, ModelCall, ModelCaller, ModelCallResult } from "../../../../server/backends/backend";
import { TypeScriptBackend } from "../../../../server/backends/typescript/typescript-backend";
import { executeRequests, type TestRequest } from "../../../helpers/backend-execution";

/**
 * Calls `TARGET` (a request parameter) with INPUT0, for the request itself unless `anonymous` is set; answers the
 * callee's OUTPUT0, or the ModelCallError's fields as an INVALID_ARG error (JSON).
 */
const CALLING_MODEL_JS = String.raw`
"use strict";
const { isModelCallError } = require("gcp-inference-stack/typescript-backend");
module.exports = class {
  execute(requests, context) {
    return Promise.all(requests.map(async (request) => {
      try {
        const options = request.parameters.anonymous ? {} : { request, version: 2, parameters: { p: 1 }, outputs: ["OUTPUT0"] };
        const result = await context.infer(request.parameters.target, { INPUT0: request.inputs.INPUT0 }, options);
        return { outputs: { OUTPUT0: result.outputs.OUTPUT0 } };
      } catch (error) {
        if (!isModelCallError(error)) throw error;
        return { error: { code: "INVALID_ARG", message: JSON.stringify({ name: error.name, code: error.code, model: error.model, message: error.message }) } };
      }
    }));
  }
};
`;

const floats = (values: readonly number[]) => new Uint8Array(Float32Array.from(values).buffer);
const valuesOf = (data: Uint8Array) => [...new Float32Array(data.slice().buffer)];

/** A caller that answers each call with its INPUT0 plus 10, in a buffer of its own, and keeps the calls and answers. */
function recordingCaller(answer?: ModelCallResult) {
  const calls: ModelCall[] = [];
  const answers: Uint8Array[] = [];
  const caller: ModelCaller = {
    infer: (call) => {
      calls.push(call);
      if (answer !== undefined) return Promise.resolve(answer);
      const data = floats(valuesOf(call.inputs.get("INPUT0")!.data).map((v) => v + 10));
      answers.push(data);
      return Promise.resolve({ modelName: call.modelName, modelVersion: "2", outputs: new Map([["OUTPUT0", { datatype: "FP32", shape: [1, 2], data }]]) });
    },
    stream: () => Promise.reject(new Error("this model streams no call")),
  };
  return { caller, calls, answers };
}

/** Starts one instance of the model `js` in a version folder of `repository`. */
function startInstance(repository: string, name: string, js: string): Promise<BackendInstance> {
  const versionDirectory = path.join(repository, name, "1");
  mkdirSync(versionDirectory, { recursive: true });
  writeFileSync(path.join(versionDirectory, "model.js"), js);
  return new TypeScriptBackend().createInstance({
    modelName: name, modelVersion: 1, modelPath: path.join(versionDirectory, "model.js"), modelDirectory: path.join(repository, name),
    modelConfig: { name, parameters: {} }, instanceName: `${name}_0`, device: "cpu", deviceId: 0,
    accelerators: [], parameters: {}, intraOpThreads: 1, graphOptimizationLevel: 0,
  });
}

const request = (values: number[], parameters: BackendRequest["parameters"], caller?: ModelCaller): TestRequest => ({
  inputs: new Map([["INPUT0", { datatype: "FP32", shape: [1, values.length], data: floats(values) }]]), parameters, requestedOutputs: ["OUTPUT0"], caller,
});

describe("TypeScript backend: a model's calls to other models", () => {
  let repository: string;
  let instance: BackendInstance;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "ts-model-calls-"));
    instance = await startInstance(repository, "caller", CALLING_MODEL_JS);
  });
  afterAll(async () => {
    await instance?.close();
    rmSync(repository, { recursive: true, force: true });
  });

  it("sends each call through the caller of the request it names, inputs in buffers of their own, outputs moved back", async () => {
    const first = recordingCaller();
    const second = recordingCaller();
    const result = await executeRequests(instance, [request([1, 2], { target: "b" }, first.caller), request([3, 4], { target: "c" }, second.caller)]);
    expect(result.responses.map((r) => ("error" in r ? r.error : valuesOf(r.outputs.get("OUTPUT0")!.data)))).toEqual([[11, 12], [13, 14]]);
    expect(first.calls).toMatchObject([{ modelName: "b", modelVersion: "2", parameters: { p: 1 }, outputs: ["OUTPUT0"] }]);
    expect(second.calls).toMatchObject([{ modelName: "c" }]);
    const sent = first.calls[0]!.inputs.get("INPUT0")!;
    expect(sent).toMatchObject({ datatype: "FP32", shape: [1, 2] });
    expect(sent.data.byteLength).toBe(sent.data.buffer.byteLength);
    // Transferred to the worker, not copied: the main thread's buffer is detached.
    expect(first.answers[0]!.byteLength).toBe(0);
    expect(first.calls[0]!.signal?.aborted).toBe(true); // the execution ended
  });

  it("rejects a failed call with a ModelCallError carrying the callee's code, message and name", async () => {
    const failing = recordingCaller({ error: { code: "NOT_FOUND", message: "Request for unknown model: 'nowhere' is not found" } });
    const result = await executeRequests(instance, [request([1, 2], { target: "nowhere" }, failing.caller)]);
    const response = result.responses[0]!;
    expect("error" in response && JSON.parse(response.error.message)).toEqual({
      name: "ModelCallError", code: "NOT_FOUND", model: "nowhere", message: "Request for unknown model: 'nowhere' is not found",
    });
  });

  it("links a call to the only request of a batch of one, and refuses to guess in a batch of several", async () => {
    const only = recordingCaller();
    const one = await executeRequests(instance, [request([5, 6], { target: "b", anonymous: true }, only.caller)]);
    expect("error" in one.responses[0]!).toBe(false);
    expect(only.calls).toHaveLength(1);
    await expect(executeRequests(instance, [request([1, 2], { target: "b", anonymous: true }, only.caller), request([1, 2], { target: "b" }, only.caller)]))
      .rejects.toThrow("context.infer() needs options.request in a batch of 2 requests");
  });

  it("answers a call made for a request without a caller (a warmup) with UNAVAILABLE", async () => {
    const result = await executeRequests(instance, [request([1, 2], { target: "b" })]);
    const response = result.responses[0]!;
    expect("error" in response && JSON.parse(response.error.message)).toMatchObject({ code: "UNAVAILABLE", model: "b" });
  });
});

/**
 * Reads `context.inferStream("s", ...)`, leaving the loop after `take` responses (a parameter), then calls `after`;
 * answers as an INVALID_ARG error the JSON of what it saw: each response's first OUTPUT0 value (or the error's
 * code and message) and `after`'s first value.
 */
const STREAMING_MODEL_JS = String.raw`
"use strict";
module.exports = class {
  async execute(requests, context) {
    const request = requests[0];
    const seen = [];
    try {
      for await (const result of context.inferStream("s", { INPUT0: request.inputs.INPUT0 })) {
        seen.push(result.outputs.OUTPUT0.data[0]);
        if (seen.length === request.parameters.take) break;
      }
    } catch (error) {
      seen.push(error.code + ": " + error.message);
    }
    const after = await context.infer("after", { INPUT0: request.inputs.INPUT0 });
    return [{ error: { code: "INVALID_ARG", message: JSON.stringify({ seen, after: after.outputs.OUTPUT0.data[0] }) } }];
  }
};
`;

/**
 * A caller whose streamed call answers `events` (a number: a result with that value; a string: an INVALID_ARG error
 * response), none final unless `final` is set; its `infer` answers 1 if the streamed call's signal aborted by then.
 */
function streamingCaller(events: readonly (number | string)[], final: boolean) {
  const streamed: ModelCall[] = [];
  const sent: Uint8Array[] = [];
  const caller: ModelCaller = {
    infer: () => {
      const aborted = streamed[0]?.signal?.aborted === true ? 1 : 0;
      return Promise.resolve({ modelName: "after", modelVersion: "1", outputs: new Map([["OUTPUT0", { datatype: "FP32", shape: [1, 1], data: floats([aborted]) }]]) });
    },
    stream: (call, listener) => {
      streamed.push(call);
      events.forEach((event, i) => {
        const data = floats([Number(event)]);
        if (typeof event === "number") sent.push(data);
        const result: ModelCallResult = typeof event === "number"
          ? { modelName: "s", modelVersion: "1", outputs: new Map([["OUTPUT0", { datatype: "FP32", shape: [1, 1], data }]]) }
          : { error: { code: "INVALID_ARG", message: event } };
        listener({ result, final: final && i === events.length - 1 });
      });
      return Promise.resolve();
    },
  };
  return { caller, streamed, sent };
}

describe("TypeScript backend: a model's streamed calls to other models", () => {
  let repository: string;
  let instance: BackendInstance;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "ts-model-streams-"));
    instance = await startInstance(repository, "streamer", STREAMING_MODEL_JS);
  });
  afterAll(async () => {
    await instance?.close();
    rmSync(repository, { recursive: true, force: true });
  });

  async function run(caller: ModelCaller, parameters: BackendRequest["parameters"] = {}): Promise<unknown> {
    const response = (await executeRequests(instance, [request([1], parameters, caller)])).responses[0]!;
    return "error" in response ? JSON.parse(response.error.message) : response;
  }

  it("hands the model every response in order, each moved rather than copied, and ends at the final one", async () => {
    const { caller, streamed, sent } = streamingCaller([10, 11, 12], true);
    expect(await run(caller)).toEqual({ seen: [10, 11, 12], after: 0 });
    expect(streamed).toMatchObject([{ modelName: "s" }]);
    expect(sent.map((data) => data.byteLength)).toEqual([0, 0, 0]);
  });

  it("cancels the call when the model leaves its loop early, before the execution ends", async () => {
    const { caller } = streamingCaller([10, 11, 12], false);
    expect(await run(caller, { take: 2 })).toEqual({ seen: [10, 11], after: 1 });
  });

  it("rejects at an error response, after the responses before it, and cancels the call", async () => {
    const { caller } = streamingCaller([10, "refused", 12], false);
    expect(await run(caller)).toEqual({ seen: [10, "INVALID_ARG: refused"], after: 1 });
  });
});
