import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";
import { waitFor } from "../helpers/wait-for";
import { grpcCallError, type GrpcMessage, GrpcTestClient } from "./grpc-transport";

const DEFAULTS = { log_file: "", log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: "default" };
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type SettingValue = { parameter_choice?: string } & Record<string, unknown>;

/** The JSON lines the server wrote from character `mark` of its output on. */
function linesSince(server: RunningServer, mark: number): Record<string, unknown>[] {
  return server.logs().slice(mark).split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("logging extension: GET/POST /v2/logging and the LogSettings RPC", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;
  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "logging-"));
    writeSimpleModel(repository, "first", "max_batch_size: 8\n");
    // Poll mode logs each model it loads at info level, which lets the tests make info lines on demand.
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--model-control-mode", "poll", "--repository-poll-secs", "1"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });
  afterEach(async () => {
    await post(JSON.stringify({ ...DEFAULTS, log_file: null }));
  });

  const get = async (): Promise<Response> => fetch(`${server.httpUrl}/v2/logging`);
  const post = async (body: string): Promise<Response> =>
    fetch(`${server.httpUrl}/v2/logging`, { method: "POST", body, headers: { "content-type": "application/json" } });
  const grpcSettings = async (settings: Record<string, GrpcMessage> = {}): Promise<Record<string, unknown>> => {
    const response = await grpc.unary<{ settings: Record<string, SettingValue> }>("LogSettings", { settings });
    return Object.fromEntries(Object.entries(response.settings).map(([name, value]) => [name, value[value.parameter_choice!]]));
  };

  it("GET answers Triton's full settings object with the defaults; so does an empty LogSettings call", async () => {
    const response = await get();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.text()).toBe(JSON.stringify(DEFAULTS));
    expect(await grpcSettings()).toEqual(DEFAULTS);
  });

  it("reports the logging extension in server metadata", async () => {
    expect(((await (await fetch(`${server.httpUrl}/v2`)).json()) as { extensions: string[] }).extensions).toContain("logging");
  });

  it("a partial POST changes only what it names and answers the full settings, which GET and gRPC then show", async () => {
    const response = await post(JSON.stringify({ log_warning: false, log_verbose_level: 2, log_format: "ISO8601" }));
    expect(response.status).toBe(200);
    const changed = { ...DEFAULTS, log_warning: false, log_verbose_level: 2, log_format: "ISO8601" };
    expect(await response.json()).toEqual(changed);
    expect(await (await get()).json()).toEqual(changed);
    expect(await grpcSettings()).toEqual(changed);
  });

  it("LogSettings over gRPC changes the settings it names (bool_param, uint32_param, string_param), as REST then shows", async () => {
    const changed = { ...DEFAULTS, log_error: false, log_verbose_level: 1, log_format: "ISO8601" };
    expect(await grpcSettings({ log_error: { bool_param: false }, log_verbose_level: { uint32_param: 1 }, log_format: { string_param: "ISO8601" } })).toEqual(changed);
    expect(await (await get()).json()).toEqual(changed);
  });

  it.each([
    ['{"log_file":"/tmp/server.log"}', "log file location can not be updated through network protocol"],
    ['{"log_info":"false"}', "expect boolean for 'log_info'"],
    ['{"log_warning":1}', "expect boolean for 'log_warning'"],
    ['{"log_verbose_level":"1"}', "expect int32 for 'log_verbose_level'"],
    ['{"log_verbose_level":-1}', "'log_verbose_level' must be an integer in [0, 2147483647], got -1"],
    ['{"log_format":"json"}', "invalid argument for log_format, got: json"],
    ['{"log_verbose":1}', "unknown log setting 'log_verbose': expected one of log_file, log_info, log_warning, log_error, log_verbose_level, log_format"],
    ['{"log_info":false', "failed to parse the request JSON buffer"],
    ["[]", "the request body must be a JSON object"],
  ])("REST refuses %s with 400 in Triton's error shape, changing nothing", async (body, message) => {
    // The valid change beside the bad one must not apply either.
    const response = await post(body.startsWith('{"') && body.endsWith("}") ? body.replace(/}$/, ',"log_error":false}') : body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain(message);
    expect(await (await get()).json()).toEqual(DEFAULTS);
  });

  it.each([
    [{ log_file: { string_param: "/tmp/server.log" } }, status.UNIMPLEMENTED, "log file location can not be updated through network protocol"],
    [{ log_info: { uint32_param: 0 } }, status.INVALID_ARGUMENT, "expect boolean for 'log_info'"],
    [{ log_info: {} }, status.INVALID_ARGUMENT, "expect boolean for 'log_info'"],
    [{ log_verbose_level: { bool_param: true } }, status.INVALID_ARGUMENT, "expect int32 for 'log_verbose_level'"],
    [{ log_format: { string_param: "json" } }, status.INVALID_ARGUMENT, "invalid argument for log_format, got: json"],
    [{ verbose: { uint32_param: 1 } }, status.INVALID_ARGUMENT, "unknown log setting 'verbose'"],
  ])("gRPC refuses %j with Triton's status and words, changing nothing", async (settings, code, message) => {
    const error = await grpcCallError(grpc.unary("LogSettings", { settings: { ...settings, log_error: { bool_param: false } } }));
    expect(error.code).toBe(code);
    expect(error.details).toContain(message);
    expect(await grpcSettings()).toEqual(DEFAULTS);
  });

  it("log_info false stops the server's info lines at once; true brings them back", async () => {
    await post('{"log_info":false}');
    writeSimpleModel(repository, "second", "max_batch_size: 8\n");
    await waitFor("model 'second' to be ready", 30_000, async () => ((await fetch(`${server.httpUrl}/v2/models/second/ready`)).status === 200 ? true : undefined));
    await post('{"log_info":true}');
    writeSimpleModel(repository, "third", "max_batch_size: 8\n");
    await waitFor("the info line of model 'third'", 30_000, async () => (server.logs().includes("poll: loaded 'third'") ? true : undefined));
    // 'second' was loaded, and its line due, before 'third' was even written.
    expect(server.logs()).not.toContain("poll: loaded 'second'");
  });

  it("log_verbose_level 1 at run time makes the per-request lines of both protocols appear, and 0 stops them", async () => {
    const before = server.logs().length;
    await fetch(`${server.httpUrl}/v2/models/first/ready`);
    await grpc.unary("ServerLive", {});
    expect(server.logs().slice(before)).not.toMatch(/HTTP request: GET|gRPC call/);

    await grpcSettings({ log_verbose_level: { uint32_param: 1 } });
    const verbose = server.logs().length;
    await fetch(`${server.httpUrl}/v2/models/first/ready`);
    await grpc.unary("ServerLive", {});
    await waitFor("the per-request lines", 10_000, async () => {
      const messages = linesSince(server, verbose).map((line) => line["msg"]);
      return messages.includes("HTTP request: GET /v2/models/first/ready") && messages.includes("gRPC call: /inference.GRPCInferenceService/ServerLive") ? true : undefined;
    });

    await post('{"log_verbose_level":0}');
    const quiet = server.logs().length;
    await fetch(`${server.httpUrl}/v2/models/first/ready`);
    await grpc.unary("ServerLive", {});
    await get(); // a request after the others, so their lines would be written by now
    // The POST that turned verbose off was logged as it arrived, and its line may be read after the mark.
    expect(server.logs().slice(quiet)).not.toMatch(/HTTP request: GET|gRPC call/);
  });

  it("log_format ISO8601 writes each line's time as an ISO 8601 string instead of epoch milliseconds", async () => {
    await post('{"log_verbose_level":1}');
    const mark = server.logs().length;
    await fetch(`${server.httpUrl}/v2/models/first/ready`);
    await post('{"log_format":"ISO8601"}');
    await fetch(`${server.httpUrl}/v2/models/first/ready`);
    const lines = await waitFor("two request lines", 10_000, async () => {
      const found = linesSince(server, mark).filter((line) => line["msg"] === "HTTP request: GET /v2/models/first/ready");
      return found.length === 2 ? found : undefined;
    });
    expect(typeof lines[0]!["time"]).toBe("number");
    expect(lines[1]!["time"]).toMatch(ISO_TIME);
  });
});

describe("log flags (--log-warning, --log-error, --log-verbose, --log-format) set the initial settings", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--log-warning", "false", "--log-error", "false", "--log-verbose", "2", "--log-format", "ISO8601"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("GET shows them, and the server's lines carry ISO 8601 times from the start", async () => {
    expect(await (await fetch(`${server.httpUrl}/v2/logging`)).json()).toEqual({
      ...DEFAULTS, log_warning: false, log_error: false, log_verbose_level: 2, log_format: "ISO8601",
    });
    const lines = linesSince(server, 0);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line["time"]).toMatch(ISO_TIME);
  });
});
