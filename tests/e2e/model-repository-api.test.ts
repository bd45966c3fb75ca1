import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_REPOSITORY, type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";
import { type GrpcCallError, grpcCallError as grpcError, type GrpcMessage, GrpcTestClient } from "./grpc-transport";

const SIMPLE_ONNX = readFileSync(path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx"));
const SIMPLE_CONFIG = {
  platform: "onnxruntime_onnx", max_batch_size: 8,
  input: ["INPUT0", "INPUT1"].map((name) => ({ name, data_type: "TYPE_INT32", dims: [16] })),
  output: ["OUTPUT0", "OUTPUT1"].map((name) => ({ name, data_type: "TYPE_INT32", dims: [16] })),
};
const simpleBody = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })),
});

const b64 = (bytes: Buffer): string => bytes.toString("base64");

describe("model repository API in explicit mode: load overrides and Triton's errors, over REST and gRPC", () => {
  let repository: string;
  /** The server's TMPDIR: override directories live here while their model is loaded, and nowhere else. */
  let serverTmp: string;
  let server: RunningServer;
  let client: GrpcTestClient;
  const post = (route: string, body?: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${server.httpUrl}${route}`, { method: "POST", body, headers });
  const load = (model: string, parameters?: Record<string, unknown>): Promise<Response> =>
    post(`/v2/repository/models/${model}/load`, parameters === undefined ? undefined : JSON.stringify({ parameters }), { "content-type": "application/json" });
  const errorOf = async (response: Response): Promise<{ status: number; error: string }> =>
    ({ status: response.status, error: ((await response.json()) as { error: string }).error });
  const ready = async (model: string, version?: string): Promise<boolean> =>
    (await fetch(`${server.httpUrl}/v2/models/${model}${version === undefined ? "" : `/versions/${version}`}/ready`)).status === 200;
  /** A POST whose path goes out exactly as written. */
  const rawPost = (rawPath: string, body: string): Promise<{ status: number; error: string }> => new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port: server.httpPort, path: rawPath, method: "POST", headers: { "content-type": "application/json" } }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode!, error: (JSON.parse(text) as { error: string }).error }));
    });
    request.on("error", reject);
    request.end(body);
  });
  const overrideDirectories = (): string[] => readdirSync(serverTmp).filter((name) => name.startsWith("inference-server-override-"));

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "repository-api-"));
    serverTmp = mkdtempSync(path.join(os.tmpdir(), "repository-api-tmp-"));
    writeSimpleModel(repository, "simple", "max_batch_size: 8");
    writeSimpleModel(repository, "broken", "max_batch_size: 8\nbogus_field: 1");
    const noFile = writeSimpleModel(repository, "no_file", "max_batch_size: 8");
    rmSync(path.join(noFile, "1", "model.onnx"));
    // Triton's qa/L0_model_config/autofill_noplatform/ensemble/no_step: a config error and no version directory.
    mkdirSync(path.join(repository, "no_step"));
    writeFileSync(path.join(repository, "no_step", "config.pbtxt"), `name: "no_step" max_batch_size: 8 platform: "ensemble" ensemble_scheduling { }
input [ { name: "data" data_type: TYPE_FP32 dims: [ 16 ] } ] output [ { name: "prob" data_type: TYPE_FP32 dims: [ 16 ] } ]`);
    server = await startServer({
      repository, services: ["http", "grpc"], env: { TMPDIR: serverTmp },
      args: ["--model-control-mode", "explicit", "--load-model", "simple", "--exit-on-error", "false"],
    });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
    rmSync(serverTmp, { recursive: true, force: true });
  });

  describe("errors as Triton answers them", () => {
    it("a model in no repository: INTERNAL 'failed to poll from model repository'", async () => {
      expect(await errorOf(await load("ghost"))).toEqual({
        status: 500, error: "failed to load 'ghost', failed to poll from model repository: model not found in any model repository",
      });
      const grpc = await grpcError(client.unary("RepositoryModelLoad", { model_name: "ghost" }));
      expect(grpc).toMatchObject({ code: status.INTERNAL, details: expect.stringMatching(/^failed to load 'ghost', failed to poll from model repository/) });
    });

    it("a config.pbtxt that does not parse fails the poll; a version that fails to load is 'load failed for model'", async () => {
      const broken = await errorOf(await load("broken"));
      expect(broken.status).toBe(500);
      expect(broken.error).toMatch(/^failed to load 'broken', failed to poll from model repository: .*bogus_field/);
      const noFile = await errorOf(await load("no_file"));
      expect(noFile.status).toBe(400);
      // Triton's words for a version that failed (qa/L0_lifecycle/lifecycle_test.py: "version 2 is at UNAVAILABLE state: ...").
      expect(noFile.error).toMatch(/^load failed for model 'no_file': version 1 is at UNAVAILABLE state: .*model\.onnx not found.*;$/);
      expect(await grpcError(client.unary("RepositoryModelLoad", { model_name: "no_file" }))).toMatchObject({ code: status.INVALID_ARGUMENT });
      // qa/L0_lifecycle/lifecycle_test.py: "Request for unknown model: '<m>' version 1 is not at ready state".
      const failedVersion = await errorOf(await post("/v2/models/no_file/versions/1/infer", JSON.stringify({ inputs: [] })));
      expect(failedVersion.status).toBe(503);
      expect(failedVersion.error).toMatch(/^Request for unknown model: 'no_file' version 1 is not at ready state: .*model\.onnx not found/);
    });

    it("a config error fails the poll with Triton's reason before any version is looked for (qa/L0_model_config ensemble/no_step)", async () => {
      expect(await errorOf(await load("no_step"))).toEqual({
        status: 500, error: "failed to load 'no_step', failed to poll from model repository: must specify 'step' for ensemble 'no_step'",
      });
    });

    it("unloading a model that is not loaded succeeds, as in Triton", async () => {
      expect((await post("/v2/repository/models/ghost/unload")).status).toBe(200);
      expect(await client.unary("RepositoryModelUnload", { model_name: "ghost" })).toEqual({});
    });

    it("a repository name is UNSUPPORTED on every repository route", async () => {
      const unsupported = { status: 501, error: "'repository_name' specification is not supported" };
      expect(await errorOf(await post("/v2/repository/other/index", "{}"))).toEqual(unsupported);
      expect(await errorOf(await post("/v2/repository/other/models/simple/load"))).toEqual(unsupported);
      expect(await errorOf(await post("/v2/repository/other/models/simple/unload"))).toEqual(unsupported);
      for (const [rpc, request] of [
        ["RepositoryIndex", { repository_name: "other" }], ["RepositoryModelLoad", { repository_name: "other", model_name: "simple" }],
        ["RepositoryModelUnload", { repository_name: "other", model_name: "simple" }],
      ] as const) {
        expect(await grpcError(client.unary(rpc, request))).toMatchObject({ code: status.UNIMPLEMENTED, details: unsupported.error });
      }
      expect(await ready("simple")).toBe(true);
    });

    it("a model name no repository could hold is refused over REST and gRPC, overrides or not", async () => {
      const parameters = { config: JSON.stringify(SIMPLE_CONFIG), "file:1/model.onnx": b64(SIMPLE_ONNX) };
      for (const name of ["..", ".", "a/b", "/abs", ""]) {
        const message = `invalid model name '${name}': a model name is one directory name of the model repository (not empty, '.' or '..', no '/')`;
        const grpc = await grpcError(client.unary("RepositoryModelLoad", {
          model_name: name, parameters: { config: { string_param: parameters.config }, "file:1/model.onnx": { bytes_param: SIMPLE_ONNX } },
        }));
        expect(grpc, name).toMatchObject({ code: status.INVALID_ARGUMENT, details: message });
        if (name === "") continue;
        // Percent-encoded, as a literal '..' or '/' never reaches the route; sent raw, as fetch would resolve '%2E%2E'.
        const rawPath = `/v2/repository/models/${encodeURIComponent(name).replaceAll(".", "%2E")}/load`;
        expect(await rawPost(rawPath, JSON.stringify({ parameters })), name).toEqual({ status: 400, error: message });
      }
      expect(overrideDirectories()).toEqual([]);
    });

    it("load parameters of the wrong type or unknown name are refused before anything loads", async () => {
      const grpcLoad = (parameters: GrpcMessage): Promise<GrpcCallError> => grpcError(client.unary("RepositoryModelLoad", { model_name: "simple", parameters }));
      expect(await grpcLoad({ config: { bytes_param: Buffer.from("{}") } })).toMatchObject({
        code: status.INVALID_ARGUMENT, details: "invalid value type for load parameter 'config', expected string_param.",
      });
      expect(await grpcLoad({ "file:1/model.onnx": { string_param: "abc" } })).toMatchObject({
        code: status.INVALID_ARGUMENT, details: "invalid value type for load parameter 'file:1/model.onnx', expected bytes_param.",
      });
      expect(await grpcLoad({ foo: { bool_param: true } })).toMatchObject({ code: status.INVALID_ARGUMENT, details: "unrecognized load parameter 'foo'." });
      expect(await errorOf(await load("simple", { config: 7 }))).toEqual({ status: 400, error: "invalid value type for load parameter 'config', expected a string" });
      expect(await errorOf(await load("simple", { "file:1/model.onnx": "not base64!" }))).toEqual({
        status: 400, error: "load parameter 'file:1/model.onnx' is not valid base64",
      });
      expect(await errorOf(await load("simple", { foo: "bar" }))).toEqual({ status: 400, error: "unrecognized load parameter 'foo'." });
      expect(await ready("simple")).toBe(true);
    });
  });

  describe("load with overrides (Triton's model repository extension)", () => {
    it("config: a JSON model config replaces config.pbtxt for this load, leaving the file alone", async () => {
      const onDisk = readFileSync(path.join(repository, "simple", "config.pbtxt"), "utf8");
      expect((await load("simple", { config: JSON.stringify({ ...SIMPLE_CONFIG, max_batch_size: 2 }) })).status).toBe(200);
      const config = (await (await fetch(`${server.httpUrl}/v2/models/simple/config`)).json()) as { name: string; max_batch_size: number };
      expect(config).toMatchObject({ name: "simple", max_batch_size: 2 });
      expect(readFileSync(path.join(repository, "simple", "config.pbtxt"), "utf8")).toBe(onDisk);
      const invalid = await errorOf(await load("simple", { config: "{\"max_batch_size\": \"many\"" }));
      expect(invalid.status).toBe(500);
      expect(invalid.error).toMatch(/^failed to load 'simple', failed to poll from model repository: Invalid config override: /);
      // A load without overrides goes back to the repository's config.
      expect((await load("simple")).status).toBe(200);
      expect(((await (await fetch(`${server.httpUrl}/v2/models/simple/config`)).json()) as { max_batch_size: number }).max_batch_size).toBe(8);
    });

    it("files over REST (base64): a model that exists only as overrides loads, serves, and leaves the repository untouched", async () => {
      const before = readdirSync(repository).sort();
      const response = await load("override_only", { config: JSON.stringify(SIMPLE_CONFIG), "file:1/model.onnx": b64(SIMPLE_ONNX) });
      expect(response.status).toBe(200);
      expect(await ready("override_only", "1")).toBe(true);
      const inferred = (await (await post("/v2/models/override_only/infer", simpleBody)).json()) as { outputs: { data: number[] }[] };
      expect(inferred.outputs[0]!.data).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
      expect(readdirSync(repository).sort()).toEqual(before);
      const [directory] = overrideDirectories();
      expect(overrideDirectories()).toHaveLength(1);
      expect(readFileSync(path.join(serverTmp, directory!, "1", "model.onnx"))).toEqual(SIMPLE_ONNX);
      expect((await post("/v2/repository/models/override_only/unload")).status).toBe(200);
      expect(overrideDirectories()).toEqual([]);
      expect(await ready("override_only")).toBe(false);
    });

    it("files over gRPC (bytes): the override directory replaces the model's own until a load without overrides", async () => {
      const parameters = { config: { string_param: JSON.stringify({ ...SIMPLE_CONFIG, name: "simple" }) }, "file:3/model.onnx": { bytes_param: SIMPLE_ONNX } };
      expect(await client.unary("RepositoryModelLoad", { model_name: "simple", parameters })).toEqual({});
      expect(await ready("simple", "3")).toBe(true);
      expect(await ready("simple", "1")).toBe(false);
      expect(overrideDirectories()).toHaveLength(1);
      // Reloading with new overrides swaps the directory: the old one goes once nothing serves from it.
      const first = overrideDirectories()[0];
      expect(await client.unary("RepositoryModelLoad", { model_name: "simple", parameters })).toEqual({});
      expect(overrideDirectories()).toHaveLength(1);
      expect(overrideDirectories()[0]).not.toBe(first);
      expect(await client.unary("RepositoryModelLoad", { model_name: "simple" })).toEqual({});
      expect(await ready("simple", "1")).toBe(true);
      expect(await ready("simple", "3")).toBe(false);
      expect(overrideDirectories()).toEqual([]);
    });

    it("files without a config, or a path out of the model directory, fail the poll with Triton's reasons and write nothing", async () => {
      const noConfig = await errorOf(await load("simple", { "file:1/model.onnx": b64(SIMPLE_ONNX) }));
      expect(noConfig).toEqual({
        status: 500,
        error: "failed to load 'simple', failed to poll from model repository: Load parameter 'config' must be specified for model file override",
      });
      const grpcNoConfig = await grpcError(client.unary("RepositoryModelLoad", { model_name: "simple", parameters: { "file:1/model.onnx": { bytes_param: SIMPLE_ONNX } } }));
      expect(grpcNoConfig).toMatchObject({ code: status.INTERNAL, details: noConfig.error });
      for (const escape of ["../escaped.txt", "1/../../../escaped.txt", "1/../.."]) {
        const escaped = await errorOf(await load("new_model", { config: JSON.stringify(SIMPLE_CONFIG), [`file:${escape}`]: b64(Buffer.from("x")) }));
        expect(escaped.status).toBe(500);
        expect(escaped.error).toContain(`failed to load 'new_model', failed to poll from model repository: Invalid file parameter 'file:${escape}'`);
        expect(escaped.error).toMatch(/must stay within model directory\.$/);
      }
      expect(existsSync(path.join(serverTmp, "escaped.txt"))).toBe(false);
      expect(existsSync(path.join(path.dirname(serverTmp), "escaped.txt"))).toBe(false);
      expect(overrideDirectories()).toEqual([]);
      expect(await ready("new_model")).toBe(false);
      expect(await ready("simple", "1")).toBe(true);
    });
  });

  describe("model code in file overrides (--allow-model-code-upload, off by default)", () => {
    const TS_CONFIG = {
      backend: "typescript", max_batch_size: 0,
      input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: [1] }], output: [{ name: "OUTPUT0", data_type: "TYPE_FP32", dims: [1] }],
    };
    /** A model.js that leaves `marker` behind as soon as it is loaded. */
    const markingModel = (marker: string): string => b64(Buffer.from(
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\nmodule.exports = class { execute(requests) { return requests.map((r) => ({ outputs: { OUTPUT0: r.inputs.INPUT0 } })); } };\n`,
    ));

    it("refuses a TypeScript model or any code file over REST and gRPC, naming the flag, and runs nothing", async () => {
      const marker = path.join(serverTmp, "model-code-ran");
      const refused = await errorOf(await load("uploaded", { config: JSON.stringify(TS_CONFIG), "file:1/model.js": markingModel(marker) }));
      expect(refused).toEqual({
        status: 400,
        error: "load failed for model 'uploaded': file overrides may not carry model code ('file:1/model.js' is code); start the server with --allow-model-code-upload true to allow it",
      });
      // Whatever the file is called, the TypeScript backend would require() it.
      const renamed = await grpcError(client.unary("RepositoryModelLoad", {
        model_name: "uploaded",
        parameters: { config: { string_param: JSON.stringify({ ...TS_CONFIG, default_model_filename: "model.onnx" }) }, "file:1/model.onnx": { bytes_param: Buffer.from(markingModel(marker), "base64") } },
      }));
      expect(renamed).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining("backend 'typescript' runs code from the model directory") });
      const beside = await errorOf(await load("uploaded", { config: JSON.stringify(SIMPLE_CONFIG), "file:1/model.onnx": b64(SIMPLE_ONNX), "file:1/addon.node": b64(Buffer.from("x")) }));
      expect(beside).toMatchObject({ status: 400, error: expect.stringContaining("'file:1/addon.node' is code") });
      expect(existsSync(marker)).toBe(false);
      expect(await ready("uploaded")).toBe(false);
      expect(overrideDirectories()).toEqual([]);
    });

    it("loads and runs uploaded model code when the server allows it", async () => {
      const tmp = mkdtempSync(path.join(os.tmpdir(), "repository-api-code-"));
      const marker = path.join(tmp, "model-code-ran");
      const allowing = await startServer({ repository, args: ["--model-control-mode", "explicit", "--allow-model-code-upload", "true"] });
      try {
        const response = await fetch(`${allowing.httpUrl}/v2/repository/models/uploaded/load`, {
          method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ parameters: { config: JSON.stringify(TS_CONFIG), "file:1/model.js": markingModel(marker) } }),
        });
        expect(response.status).toBe(200);
        expect(readFileSync(marker, "utf8")).toBe("ran");
      } finally {
        await allowing.stop();
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  });

  describe("cross-site requests cannot change the repository", () => {
    it("refuses an unload from a foreign Origin or one the browser marks cross-site, and takes Triton clients' requests", async () => {
      const unload = (headers: Record<string, string>, body = ""): Promise<Response> => post("/v2/repository/models/simple/unload", body, headers);
      const foreign = await errorOf(await unload({ origin: "http://attacker.example", "content-type": "application/json" }, "{}"));
      expect(foreign.status).toBe(403);
      expect(foreign.error).toMatch(/^cross-origin request refused: Origin 'http:\/\/attacker.example'/);
      const marked = await errorOf(await unload({ "sec-fetch-site": "cross-site", "content-type": "text/plain" }, "{}"));
      expect(marked.status).toBe(403);
      expect(marked.error).toMatch(/^cross-site request refused: the browser marks it 'Sec-Fetch-Site: cross-site'/);
      expect(await ready("simple")).toBe(true);
      // The request a page on the server's own origin sends is no threat.
      expect((await unload({ origin: server.httpUrl, "content-type": "application/json" }, "{}")).status).toBe(200);
      expect((await load("simple")).status).toBe(200);
      // tritonclient.http sends no Content-Type; tritonclient.http.aio (aiohttp) sends application/octet-stream.
      expect((await post("/v2/repository/models/simple/load", "{}", { "content-type": "application/octet-stream" })).status).toBe(200);
      expect((await post("/v2/repository/models/simple/load")).status).toBe(200);
      const preflight = await fetch(`${server.httpUrl}/v2/repository/models/simple/unload`, {
        method: "OPTIONS", headers: { origin: "http://attacker.example", "access-control-request-method": "POST" },
      });
      expect(preflight.status).toBe(405);
      expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
      expect(await ready("simple")).toBe(true);
    });
  });

  it("removes every override directory when the server exits", async () => {
    expect((await load("exit_check", { config: JSON.stringify(SIMPLE_CONFIG), "file:1/model.onnx": b64(SIMPLE_ONNX) })).status).toBe(200);
    expect(overrideDirectories()).toHaveLength(1);
    expect(await server.stop()).toBe(0);
    expect(overrideDirectories()).toEqual([]);
  });
});

describe("a model directory that appears in two repositories", () => {
  it("is refused on explicit load as not unique, as in Triton", async () => {
    const first = mkdtempSync(path.join(os.tmpdir(), "repository-api-a-"));
    const second = mkdtempSync(path.join(os.tmpdir(), "repository-api-b-"));
    writeSimpleModel(first, "twice", "max_batch_size: 8");
    mkdirSync(path.join(second, "twice"));
    writeFileSync(path.join(second, "twice", "config.pbtxt"), "max_batch_size: 1");
    const server = await startServer({ repository: first, args: ["--model-repository", second, "--model-control-mode", "explicit"] });
    try {
      const response = await fetch(`${server.httpUrl}/v2/repository/models/twice/load`, { method: "POST" });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: string }).error).toBe(
        "failed to load 'twice', failed to poll from model repository: not unique across all model repositories",
      );
    } finally {
      await server.stop();
      rmSync(first, { recursive: true, force: true });
      rmSync(second, { recursive: true, force: true });
    }
  });
});
