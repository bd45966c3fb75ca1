import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../../../server/backends/backend";
import { IdentityBackend } from "../../../../server/backends/identity-backend";
import { TypeScriptBackend } from "../../../../server/backends/typescript/typescript-backend";
import { InferenceCore } from "../../../../server/core/index";

function writeDecoupled(repository: string, name: string, backend: string, modelJs?: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  if (modelJs !== undefined) writeFileSync(path.join(repository, name, "1", "model.js"), modelJs);
  writeFileSync(path.join(repository, name, "config.pbtxt"), [
    `backend: "${backend}"`, "max_batch_size: 0",
    'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    "model_transaction_policy { decoupled: true }",
  ].join("\n"));
}

describe("a decoupled model on a backend that answers each request once", () => {
  let repository: string;
  let core: InferenceCore;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "decoupled-backends-"));
    writeDecoupled(repository, "identity_decoupled", "identity");
    writeDecoupled(repository, "typescript_decoupled", "typescript", "module.exports = class { execute(requests) { for (const r of requests) r.responseSender.send(undefined, { final: true }); } };\n");
    core = new InferenceCore({
      modelRepositories: [repository], serverName: "triton", serverVersion: "test", strictReadiness: true, exitOnError: false,
      modelControlMode: "none", repositoryPollMs: 0, responseCacheBytes: undefined, startupModels: [],
      log: { info: () => undefined, warn: () => undefined },
      loader: {
        autoCompleteConfig: true, gpuCount: 0, cpuCount: 2, defaultMaxBatchSize: 4, intraOpThreads: 1, instanceRestart: { initialBackoffMs: 100, maxBackoffMs: 1000 },
        backends: new Map<string, Backend>([["identity", new IdentityBackend()], ["typescript", new TypeScriptBackend()]]),
      },
    });
    await core.start();
  });
  afterAll(async () => {
    await core.close();
    rmSync(repository, { recursive: true, force: true });
  });

  it("is refused at load, naming the backend, while a backend that streams loads it", () => {
    const index = core.repositoryIndex(false);
    expect(index.find((e) => e.name === "identity_decoupled")).toMatchObject({
      state: "UNAVAILABLE", reason: "backend 'identity' cannot serve a decoupled model (model_transaction_policy { decoupled: true }): its executions answer each request once",
    });
    expect(index.find((e) => e.name === "typescript_decoupled")?.state).toBe("READY");
  });
});
