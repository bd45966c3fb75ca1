import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendResponse } from "../../../../server/backends/backend";
import { TypeScriptBackend } from "../../../../server/backends/typescript/typescript-backend";
import { executeRequests } from "../../../helpers/backend-execution";
import { fromFloat16Array } from "../../../../protocol/float16";
import { compileTypeScriptModel } from "../../../../tools/model-builder/compile-typescript-model";
import { REPO_ROOT } from "../../../helpers/server-process";

/** A model as a user writes it, in a project that depends on the package (the types come from dist/ through `exports`). */
const MODEL_TS = `
import type { ExecuteRequest, ExecuteResponse, InitializeArgs, TypeScriptModel } from "gcp-inference-stack/typescript-backend";
import { float32ToFp16Array, inputTensor } from "gcp-inference-stack/typescript-backend";

export default class Scale implements TypeScriptModel {
  #factor = 2;

  initialize(args: InitializeArgs): void {
    this.#factor = Number(args.modelConfig.parameters["factor"]?.string_value ?? 2);
  }

  execute(requests: readonly ExecuteRequest[]): ExecuteResponse[] {
    return requests.map((request): ExecuteResponse => {
      const input = inputTensor(request, "INPUT0", "FP32");
      if (input.data.length === 0) return { error: { code: "INVALID_ARG", message: "INPUT0 is empty" } };
      const scaled = float32ToFp16Array(input.data.map((value) => value * this.#factor));
      return { outputs: { OUTPUT0: { datatype: "FP16", shape: input.shape, data: scaled }, NOTE: { datatype: "BYTES", shape: [1], data: ["scaled"] } } };
    });
  }
}
`;

/** A decoupled model forwarding the responses of a model it calls (a streaming pipeline). */
const STREAMING_MODEL_TS = `
import type { ExecuteContext, ExecuteRequest, InferResult, TypeScriptModel } from "gcp-inference-stack/typescript-backend";
import { isModelCallError } from "gcp-inference-stack/typescript-backend";

export default class Forward implements TypeScriptModel {
  async execute(requests: readonly ExecuteRequest[], context: ExecuteContext): Promise<void> {
    for (const request of requests) {
      const sender = request.responseSender!;
      try {
        for await (const result of context.inferStream("tokens", request.inputs, { request, parameters: { max_tokens: 4 } })) {
          const { outputs }: InferResult = result;
          sender.send({ outputs });
        }
        sender.send(undefined, { final: true });
      } catch (error) {
        if (!isModelCallError(error)) throw error;
        sender.send({ error: { code: error.code, message: error.message } }, { final: true });
      }
    }
  }
}
`;

let project: string;
let repository: string;

/** Type errors per source, checked in one program (a program costs seconds; its files are checked apart). */
function typeErrors(sources: Readonly<Record<string, string>>): Record<string, string[]> {
  const files = Object.entries(sources).map(([name, source]) => {
    const file = path.join(project, `${name}.ts`);
    writeFileSync(file, source);
    return file;
  });
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"], strict: true, noEmit: true, skipLibCheck: true, types: [],
  });
  return Object.fromEntries(Object.keys(sources).map((name, i) => [
    name, ts.getPreEmitDiagnostics(program, program.getSourceFile(files[i]!)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
  ]));
}

beforeAll(() => {
  project = mkdtempSync(path.join(os.tmpdir(), "ts-model-project-"));
  mkdirSync(path.join(project, "node_modules"));
  symlinkSync(REPO_ROOT, path.join(project, "node_modules", "gcp-inference-stack"), "dir");
  repository = mkdtempSync(path.join(os.tmpdir(), "ts-model-repository-"));
});

afterAll(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(repository, { recursive: true, force: true });
});

describe("the published TypeScript-backend contract (gcp-inference-stack/typescript-backend)", () => {
  it("type-checks models written against it (one streaming a callee's responses), and catches FP16 data that is not its bits or an error code Triton lacks", () => {
    const errors = typeErrors({
      model: MODEL_TS,
      streaming: STREAMING_MODEL_TS,
      wrongArray: MODEL_TS.replace("data: scaled }", "data: new Float32Array(1) }"),
      wrongCode: MODEL_TS.replace('code: "INVALID_ARG"', 'code: "BAD_INPUT"'),
    });
    expect(errors["model"]).toEqual([]);
    expect(errors["streaming"]).toEqual([]);
    expect(errors["wrongArray"]!.join("\n")).toMatch(/Float32Array.* is not assignable/);
    expect(errors["wrongCode"]!.join("\n")).toMatch(/"BAD_INPUT"/);
  });

  it("runs once compiled to model.js, from a repository outside the package (the server provides the package)", async () => {
    const versionDirectory = path.join(repository, "scale", "1");
    mkdirSync(versionDirectory, { recursive: true });
    const source = path.join(project, "model.ts");
    writeFileSync(source, MODEL_TS);
    writeFileSync(path.join(versionDirectory, "model.js"), compileTypeScriptModel(source));
    const instance = await new TypeScriptBackend().createInstance({
      modelName: "scale", modelVersion: 1, modelPath: path.join(versionDirectory, "model.js"), modelDirectory: path.join(repository, "scale"),
      modelConfig: { name: "scale", parameters: { factor: { string_value: "3" } } }, instanceName: "scale_0", device: "cpu", deviceId: 0,
      accelerators: [], parameters: {}, intraOpThreads: 1, graphOptimizationLevel: 0,
    });
    try {
      const input = (values: number[]) => new Map([["INPUT0", { datatype: "FP32", shape: [1, values.length], data: new Uint8Array(Float32Array.from(values).buffer) }]]);
      const result = await executeRequests(instance, [
        { inputs: input([1, 2.5]), parameters: {}, requestedOutputs: ["OUTPUT0", "NOTE"] },
        { inputs: input([]), parameters: {}, requestedOutputs: ["OUTPUT0"] },
      ]);
      const [scaled, empty] = result.responses as [BackendResponse, BackendResponse];
      if ("error" in scaled) throw new Error(scaled.error.message);
      const output = scaled.outputs.get("OUTPUT0")!;
      expect(output.datatype).toBe("FP16");
      expect([...fromFloat16Array(new Uint16Array(output.data.slice().buffer))]).toEqual([3, 7.5]);
      expect(Buffer.from(scaled.outputs.get("NOTE")!.data.subarray(4)).toString()).toBe("scaled");
      expect(empty).toEqual({ error: { code: "INVALID_ARG", message: "INPUT0 is empty" } });
    } finally {
      await instance.close();
    }
  });
});
