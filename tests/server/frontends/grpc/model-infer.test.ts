import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseServerOptions } from "../../../../server/cli/server-options";
import { Cancellation, type InferenceCore } from "../../../../server/core/index";
import type { ModelInferRequest__Output } from "../../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import { loadGrpcServiceDefinitions } from "../../../../server/frontends/grpc/grpc-service-definitions";
import { modelInfer, modelOf } from "../../../../server/frontends/grpc/model-infer";
import { RequestBytesBudget } from "../../../../server/frontends/request-bytes-budget";
import { SystemSharedMemory } from "../../../../server/frontends/shared-memory/system-shared-memory";
import { createCore } from "../../../../server/server-wiring";

/**
 * What ModelInfer (and each ModelStreamInfer message) does with the request message grpc-js decoded, in-process
 * with the real core and ONNX Runtime: grpc-js keeps that message in the call's closures after the call ends,
 * so once the response is encoded it must no longer hold the tensors' bytes (see releaseTensors in model-infer.ts).
 */
const options = parseServerOptions([
  "--model-repository", path.resolve(__dirname, "../../../../models"), "--model-control-mode", "explicit", "--load-model", "identity_fp32",
]);
const sharedMemory = new SystemSharedMemory({ allowed: false, maxRegions: options.maxSharedMemoryRegions, maxInputBytes: options.maxSharedMemoryInputBytes });
const budget = new RequestBytesBudget(options.maxInflightRequestBytes);
let core: InferenceCore;

beforeAll(async () => {
  core = createCore(options, { serverVersion: "test", gpuCount: 0, log: { info: () => undefined, warn: () => undefined } });
  await core.start();
}, 60_000);

afterAll(() => core.close());

const modelInferMethod = loadGrpcServiceDefinitions().inference["ModelInfer"]!;

/** A ModelInferRequest as grpc-js hands it to the handler: serialized and decoded by the endpoint's own definitions. */
function request(shape: readonly number[], raw: readonly Buffer[], fp32Contents?: readonly number[]): ModelInferRequest__Output {
  const input = { name: "INPUT0", datatype: "FP32", shape, ...(fp32Contents === undefined ? {} : { contents: { fp32_contents: fp32Contents } }) };
  const bytes = modelInferMethod.requestSerialize({ model_name: "identity_fp32", inputs: [input], raw_input_contents: raw });
  return modelInferMethod.requestDeserialize(bytes) as ModelInferRequest__Output;
}

const floats = (...values: number[]) => Buffer.from(Float32Array.from(values).buffer);

describe("modelInfer", () => {
  it("answers from raw_input_contents, then the message no longer holds them", async () => {
    const message = request([1, 3], [floats(1, 2, 3)]);
    expect(message.raw_input_contents).toHaveLength(1);
    const response = await modelInfer(modelOf(core, message), sharedMemory, budget, message, new Cancellation());
    expect(response.raw_output_contents.map((bytes) => Buffer.from(bytes))).toEqual([floats(1, 2, 3)]);
    expect(message.raw_input_contents).toEqual([]);
    expect(message.inputs[0]!.name).toBe("INPUT0");
  });

  it("answers from typed contents, then the message's inputs no longer hold them", async () => {
    const message = request([1, 2], [], [4, 5]);
    expect(message.inputs[0]!.contents?.fp32_contents).toEqual([4, 5]);
    const response = await modelInfer(modelOf(core, message), sharedMemory, budget, message, new Cancellation());
    expect(response.raw_output_contents.map((bytes) => Buffer.from(bytes))).toEqual([floats(4, 5)]);
    expect(message.inputs[0]!.contents).toBeNull();
  });

  it("lets go of the tensors of a request it refuses too", async () => {
    const message = request([1, 3], [floats(1, 2)]);
    await expect(modelInfer(modelOf(core, message), sharedMemory, budget, message, new Cancellation())).rejects.toThrow(/INPUT0/);
    expect(message.raw_input_contents).toEqual([]);
  });
});
