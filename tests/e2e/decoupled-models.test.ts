import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBIAN_PYTHON } from "../../common/debian-python";
import { InferenceClient } from "../../client/index";
import { writeStreamProbeModel } from "../helpers/decoupled-test-model";
import { EXAMPLE_REPOSITORY, REPO_ROOT, type RunningServer, runScriptToExit, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";
import { type GrpcMessage, GrpcTestClient, grpcCallError, PROTO_DIRECTORY, streamResponses } from "./grpc-transport";

const run = promisify(execFile);
const STREAM_CLIENT_SCRIPT = path.join(__dirname, "python", "decoupled_stream_client.py");

interface StreamMessage {
  readonly error_message: string;
  readonly infer_response: {
    readonly id: string;
    readonly model_name?: string;
    readonly outputs?: readonly GrpcMessage[];
    readonly raw_output_contents?: readonly Buffer[];
    readonly parameters?: Readonly<Record<string, { bool_param?: boolean }>>;
  };
}

type Parameter = { bool_param: boolean } | { string_param: string };

function probeRequest(count: number, parameters: Record<string, Parameter> = {}, id = "", model = "stream_probe"): GrpcMessage {
  return {
    model_name: model, id, parameters,
    inputs: [{ name: "COUNT", datatype: "INT32", shape: ["1"], contents: { int_contents: [count] } }],
  };
}

const behave = (value: string): Record<string, Parameter> => ({ behave: { string_param: value } });

/** What one stream message says: OUT's value, an error, or nothing (the empty final response), and its final flag. */
function summary(message: StreamMessage): { out?: number; error?: string; final: boolean | undefined } {
  const final = message.infer_response.parameters?.["triton_final_response"]?.bool_param;
  if (message.error_message !== "") return { error: message.error_message, final };
  const raw = message.infer_response.raw_output_contents?.[0];
  if (raw === undefined) return { final };
  return { out: raw.readInt32LE(0), final };
}

describe("decoupled models: many responses per request", () => {
  let repository: string;
  let versionDir: string;
  let server: RunningServer;
  let client: GrpcTestClient;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "decoupled-"));
    versionDir = writeStreamProbeModel(repository, "stream_probe");
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--instance-restart-backoff-ms", "10"] });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const stream = async (requests: readonly GrpcMessage[]): Promise<ReturnType<typeof summary>[]> =>
    (await streamResponses(client.modelStreamInfer(), requests) as unknown as StreamMessage[]).map(summary);

  async function failures(): Promise<number> {
    const stats = await fetch(`${server.httpUrl}/v2/models/stream_probe/stats`).then((r) => r.json()) as { model_stats: { inference_stats: { fail: { count: number } } }[] };
    return stats.model_stats[0]!.inference_stats.fail.count;
  }

  it("streams every response over ModelStreamInfer, triton_final_response true on the last only", async () => {
    expect(await stream([probeRequest(4)])).toEqual([
      { out: 0, final: false }, { out: 1, final: false }, { out: 2, final: false }, { out: 3, final: true },
    ]);
  });

  it("sends the empty final response only when the request sets triton_enable_empty_final_response", async () => {
    const finalAlone = { final_alone: { bool_param: true } };
    expect(await stream([probeRequest(2, { ...finalAlone, triton_enable_empty_final_response: { bool_param: true } }, "req-7")])).toEqual([
      { out: 0, final: false }, { out: 1, final: false }, { final: true },
    ]);
    const messages = await streamResponses(client.modelStreamInfer(), [probeRequest(0, { triton_enable_empty_final_response: { bool_param: true } }, "req-8")]) as unknown as StreamMessage[];
    expect(messages).toHaveLength(1);
    expect(messages[0]!.infer_response).toMatchObject({ id: "req-8", model_name: "stream_probe", outputs: [] });
    expect(await stream([probeRequest(2, finalAlone)])).toEqual([{ out: 0, final: false }, { out: 1, final: false }]);
  });

  it("refuses unary ModelInfer and REST infer with Triton's messages", async () => {
    const unary = await grpcCallError(client.unary("ModelInfer", probeRequest(1)));
    expect(unary.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
    expect(unary.code).toBe(12); // UNIMPLEMENTED, Triton's mapping of UNSUPPORTED
    const rest = await fetch(`${server.httpUrl}/v2/models/stream_probe/infer`, {
      method: "POST", body: JSON.stringify({ inputs: [{ name: "COUNT", datatype: "INT32", shape: [1], data: [1] }] }),
    });
    expect(rest.status).toBe(501);
    expect(await rest.json()).toEqual({ error: "HTTP end point doesn't support models with decoupled transaction policy" });
  });

  it("passes an error response on and goes on streaming", async () => {
    expect(await stream([probeRequest(1, behave("error"), "e1")])).toEqual([
      { out: 0, final: false }, { error: "response 1 is refused", final: false }, { out: 2, final: true },
    ]);
  });

  it("ends the stream with an error response when execute() throws mid-stream, and the instance serves on", async () => {
    expect(await stream([probeRequest(1, behave("throw"))])).toEqual([
      { out: 0, final: false }, { out: 1, final: false }, { error: "TypeScript model execute() failed: execute exploded mid-stream", final: true },
    ]);
    expect(await stream([probeRequest(1)])).toEqual([{ out: 0, final: true }]);
  });

  it("refuses responses returned from a decoupled model's execute()", async () => {
    expect(await stream([probeRequest(1, behave("returns"))])).toEqual([{
      error: "TypeScript model execute() failed: the model is decoupled, so execute() must return nothing (it answers through request.responseSender)", final: true,
    }]);
  });

  it("ends the stream with an error response when the worker dies mid-stream, and a new instance serves", async () => {
    expect(await stream([probeRequest(1, behave("exit"))])).toEqual([
      { out: 0, final: false }, { error: "the instance's worker thread exited with code 7", final: true },
    ]);
    const next = await waitFor("a new instance", 30_000, async () => {
      const answers = await stream([probeRequest(1)]);
      return answers[0]?.out === 0 ? answers : undefined;
    });
    expect(next).toEqual([{ out: 0, final: true }]);
  });

  it("refuses a send after the final flag to the model", async () => {
    expect(await stream([probeRequest(1, { ...behave("after-final"), tag: { string_param: "after-final" } })])).toEqual([{ out: 0, final: true }]);
    const report = await waitFor("the model's report", 10_000, async () => readReport("after-final"));
    expect(report).toEqual({ threw: "Unable to send response. Response sender has been closed." });
  });

  function readReport(tag: string): unknown {
    const file = path.join(versionDir, `${tag}.json`);
    return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
  }

  it("frees the instance when execute() returns: a request is answered while another still streams", async () => {
    const call = client.modelStreamInfer();
    const seen: ReturnType<typeof summary>[] = [];
    const ended = new Promise<void>((resolve) => {
      call.on("data", (message: StreamMessage) => {
        seen.push(summary(message));
        if (seen.length === 1) call.write(probeRequest(2, {}, "second"));
        if (message.infer_response.id === "second" && summary(message).final === true) call.cancel();
      });
      call.on("error", () => resolve());
    });
    call.write(probeRequest(0, { ...behave("endless"), tag: { string_param: "concurrent" } }, "endless"));
    await ended;
    expect(seen.filter((s) => s.final === true)).toEqual([{ out: 1, final: true }]);
    await waitFor("the endless stream to see its cancellation", 10_000, async () => readReport("concurrent"));
  });

  it("cancels the request when the client cancels the gRPC stream: the model sees it and its sends are refused", async () => {
    const before = await failures();
    const call = client.modelStreamInfer();
    let received = 0;
    const ended = new Promise<void>((resolve) => {
      call.on("data", () => {
        if (++received === 3) call.cancel();
      });
      call.on("error", () => resolve());
    });
    call.write(probeRequest(0, { ...behave("endless"), tag: { string_param: "grpc-cancel" } }));
    await ended;
    const report = await waitFor("the model to see the cancellation", 10_000, async () => readReport("grpc-cancel")) as { sent: number; sendThrew: boolean };
    expect(report.sendThrew).toBe(true);
    expect(report.sent).toBeGreaterThanOrEqual(3);
    // The request ended (counted as failed: cancelled) rather than staying open.
    await waitFor("the cancelled request to be counted", 10_000, async () => ((await failures()) > before ? true : undefined));
  });

  it("generate answers a model's one response as JSON; generate_stream sends one event per response", async () => {
    const one = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate`, { method: "POST", body: JSON.stringify({ COUNT: 1 }) });
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual({ model_name: "stream_probe", model_version: "1", OUT: 0 });
    const many = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate`, { method: "POST", body: JSON.stringify({ COUNT: 3 }) });
    expect(await many.json()).toEqual({
      error: "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses",
    });
    const streamed = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, { method: "POST", body: JSON.stringify({ COUNT: 3 }) });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await streamed.text()).toBe([0, 1, 2].map((i) => `data: {"OUT":${i},"model_name":"stream_probe","model_version":"1"}\n\n`).join(""));
  });

  it("generate_stream sends an error response as an error event, and a request refused up front as a JSON error", async () => {
    const streamed = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, {
      method: "POST", body: JSON.stringify({ COUNT: 1, parameters: { behave: "error" } }),
    });
    expect(await streamed.text()).toBe([
      'data: {"OUT":0,"model_name":"stream_probe","model_version":"1"}\n\n', 'data: {"error":"response 1 is refused"}\n\n',
      'data: {"OUT":2,"model_name":"stream_probe","model_version":"1"}\n\n',
    ].join(""));
    const refused = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, { method: "POST", body: JSON.stringify({ COUNT: [1, 2] }) });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("application/json");
    expect(await refused.json()).toEqual({ error: "The schema can not convert input 'COUNT' to tensor with proper shape" });
  });

  it("generate_stream sends a first response that is an error as an event stream with the error's status, as Triton", async () => {
    // src/http_server.cc, GenerateRequestClass::InferResponseComplete: the first response sets the status
    // (HttpCodeFromError) and StartResponse the event-stream type; qa/L0_http/generate_endpoint_test.py
    // (test_generate_stream_response_error) reads such an error as an event.
    const failed = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, {
      method: "POST", body: JSON.stringify({ COUNT: 1, parameters: { behave: "returns" } }),
    });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await failed.text()).toBe(
      'data: {"error":"TypeScript model execute() failed: the model is decoupled, so execute() must return nothing (it answers through request.responseSender)"}\n\n',
    );
  });

  it("takes the body's id as the request's id: every response and event carries it, and the request's errors quote it", async () => {
    // src/http_server.cc, HandleGenerate (ParseJsonTritonRequestID) and FinalizeResponse; qa/L0_http/generate_endpoint_test.py (test_request_id).
    const one = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate`, { method: "POST", body: JSON.stringify({ COUNT: 1, id: "42" }) });
    expect(await one.json()).toEqual({ id: "42", model_name: "stream_probe", model_version: "1", OUT: 0 });
    const empty = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate`, { method: "POST", body: JSON.stringify({ COUNT: 1, id: "" }) });
    expect(await empty.json()).toEqual({ model_name: "stream_probe", model_version: "1", OUT: 0 });
    const streamed = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, { method: "POST", body: JSON.stringify({ COUNT: 2, id: "s-1" }) });
    expect(await streamed.text()).toBe([0, 1].map((i) => `data: {"OUT":${i},"id":"s-1","model_name":"stream_probe","model_version":"1"}\n\n`).join(""));
    // Refused by the request's checks before it runs: a JSON 400, its message prefixed as InferenceRequest::LogRequest() does.
    const refused = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, { method: "POST", body: JSON.stringify({ id: "r-9" }) });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("application/json");
    expect(((await refused.json()) as { error: string }).error).toMatch(/^\[request id: r-9\] expected 1 inputs but got 0 inputs for model 'stream_probe'\. Got input\(s\) \[\], but missing required input\(s\) \['COUNT'\]/);
    const badId = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate`, { method: "POST", body: JSON.stringify({ COUNT: 1, id: 7 }) });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toEqual({ error: "Unable to parse 'id': attempt to access JSON non-string as string" });
  });

  it("our client streams over gRPC (inferStream) and over HTTP (generateStream); leaving the loop cancels", async () => {
    const grpc = new InferenceClient({ url: `grpc://${server.grpcAddress!}` });
    const http = new InferenceClient({ url: server.httpUrl });
    try {
      const count = [{ name: "COUNT", datatype: "INT32", shape: [1], data: [3] }] as const;
      const streamed: unknown[] = [];
      for await (const response of grpc.inferStream("stream_probe", count)) {
        streamed.push("result" in response ? [...response.result.data("OUT", "INT32")] : response.error.message);
      }
      expect(streamed).toEqual([[0], [1], [2]]);
      const withError: unknown[] = [];
      for await (const response of grpc.inferStream("stream_probe", count, { parameters: { behave: "error" } })) {
        withError.push("result" in response ? [...response.result.data("OUT", "INT32")] : response.error.message);
      }
      expect(withError).toEqual([[0], "response 1 is refused", [2]]);
      const events: unknown[] = [];
      for await (const event of http.generateStream("stream_probe", { COUNT: 2 })) events.push("response" in event ? event.response["OUT"] : event.error.message);
      expect(events).toEqual([0, 1]);
      let seen = 0;
      for await (const response of grpc.inferStream("stream_probe", [{ ...count[0], data: [0] }], { parameters: { behave: "endless", tag: "client-break" } })) {
        expect("result" in response).toBe(true);
        if (++seen === 2) break;
      }
      const report = await waitFor("the model to see the client leave", 10_000, async () => readReport("client-break")) as { sendThrew: boolean };
      expect(report.sendThrew).toBe(true);
    } finally {
      await grpc.close();
      await http.close();
    }
  });

  it("cancels the request when a generate_stream client disconnects mid-stream", async () => {
    const before = await failures();
    const controller = new AbortController();
    const response = await fetch(`${server.httpUrl}/v2/models/stream_probe/generate_stream`, {
      method: "POST", body: JSON.stringify({ COUNT: 0, behave: "endless", tag: "sse-disconnect" }), signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = "";
    while (text.split("\n\n").length <= 3) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const report = await waitFor("the model to see the disconnect", 10_000, async () => readReport("sse-disconnect")) as { sent: number; sendThrew: boolean };
    expect(report.sendThrew).toBe(true);
    await waitFor("the cancelled request to be counted", 10_000, async () => ((await failures()) > before ? true : undefined));
  });
});

describe("the example decoupled model, text_generator", () => {
  let server: RunningServer;
  let stubs: string;

  beforeAll(async () => {
    stubs = mkdtempSync(path.join(os.tmpdir(), "grpc-python-stubs-"));
    await run(DEBIAN_PYTHON, [
      "-m", "grpc_tools.protoc", `-I${PROTO_DIRECTORY}`, `--python_out=${stubs}`, `--grpc_python_out=${stubs}`, "grpc_service.proto", "model_config.proto",
    ], { timeout: 60_000 });
    server = await startServer({ repository: EXAMPLE_REPOSITORY, services: ["http", "grpc"], args: ["--model-control-mode", "explicit", "--load-model", "text_generator"] });
  });
  afterAll(async () => {
    await server?.stop();
    if (stubs !== undefined) rmSync(stubs, { recursive: true, force: true });
  });

  it("streams one byte per event over generate_stream, deterministically", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/text_generator/generate_stream`, {
      method: "POST", body: JSON.stringify({ text_input: "hello world", max_tokens: 5 }),
    });
    const events = (await response.text()).split("\n\n").filter((e) => e !== "").map((e) => JSON.parse(e.replace(/^data: /, "")) as { text_output: string });
    expect(events.map((e) => e.text_output).join("")).toBe("heldh");
  });

  it("is measured by inference-perf --streaming over gRPC and HTTP, and refused without it", async () => {
    const perf = path.join(REPO_ROOT, "dist", "tools", "perf", "main.js");
    const window = ["-p", "300", "-r", "3", "-s", "1000", "--input-data", "zero"];
    for (const [protocol, url] of [["grpc", server.grpcAddress!], ["http", new URL(server.httpUrl).host]] as const) {
      const run = await runScriptToExit(perf, ["-m", "text_generator", "-i", protocol, "-u", url, "--streaming", ...window]);
      expect(run.code, run.output).toBe(0);
      expect(run.stderr).toMatch(/^streaming at concurrency 1: time to first response p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms; 16\.0 responses per stream, [\d.]+ responses\/s$/m);
    }
    const refused = await runScriptToExit(perf, ["-m", "text_generator", "-i", "grpc", "-u", server.grpcAddress!, ...window]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("model 'text_generator' is decoupled (many responses per request): measure it with --streaming");
  });

  it("streams to an independent gRPC client (Debian's python3-grpcio), with the empty final response", async () => {
    const { stdout } = await run(DEBIAN_PYTHON, [STREAM_CLIENT_SCRIPT, stubs, server.grpcAddress!], { timeout: 60_000 });
    expect(stdout.trim().split("\n")).toEqual([
      "ok: 5 responses, text 'heldh', triton_final_response false on each",
      "ok: the empty final response: no outputs, triton_final_response true",
      "all checks passed",
    ]);
  });
});

describe("generate in the inference API group (--http-restricted-api)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      repository: EXAMPLE_REPOSITORY,
      args: ["--model-control-mode", "explicit", "--load-model", "text_generator", "--http-restricted-api", "inference:infer-key=let-me-in"],
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(["generate", "generate_stream"])("%s answers 403 without the inference group's header and serves with it", async (route) => {
    const url = `${server.httpUrl}/v2/models/text_generator/${route}`;
    const body = JSON.stringify({ text_input: "ab", max_tokens: 1 });
    const refused = await fetch(url, { method: "POST", body });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "This API is restricted, expecting header 'infer-key'" });
    const served = await fetch(url, { method: "POST", body, headers: { "infer-key": "let-me-in" } });
    expect(served.status).toBe(200);
    await served.text();
  });
});

describe("a decoupled model unloaded while it streams", () => {
  let repository: string;
  let server: RunningServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "decoupled-unload-"));
    writeStreamProbeModel(repository, "stream_probe");
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--model-control-mode", "explicit", "--load-model", "stream_probe"] });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("ends the open stream with an error response once its instance closes, and the unload completes", async () => {
    const call = client.modelStreamInfer();
    const messages: ReturnType<typeof summary>[] = [];
    let unloaded: Promise<Response> | undefined;
    const done = new Promise<void>((resolve) => {
      call.on("data", (message: StreamMessage) => {
        messages.push(summary(message));
        if (messages.length === 2) unloaded = fetch(`${server.httpUrl}/v2/repository/models/stream_probe/unload`, { method: "POST" });
        if (summary(message).final === true) resolve();
      });
    });
    call.on("error", () => undefined);
    call.write(probeRequest(0, { ...behave("endless"), tag: { string_param: "unload" } }));
    await done;
    call.cancel();
    expect(messages.at(-1)).toEqual({
      error: "the model's instance was closed (model unloaded or server shutting down) before the stream's final response", final: true,
    });
    expect((await unloaded!).status).toBe(200);
  });
});
