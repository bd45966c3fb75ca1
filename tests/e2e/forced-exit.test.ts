import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent } from "undici";
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/server-process";
import { writeProbeModel } from "../helpers/typescript-test-models";
import { waitFor } from "../helpers/wait-for";

const IMAGE_BYTES = 3 * 224 * 224 * 4;

/** resnet50's binary infer body: more work than the exit timeout leaves time for once many are queued. */
function resnetRequest(): { body: Buffer; headerLength: number } {
  const header = JSON.stringify({
    inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], parameters: { binary_data_size: IMAGE_BYTES } }],
    outputs: [{ name: "output", parameters: { binary_data: true } }],
  });
  return { body: Buffer.concat([Buffer.from(header), Buffer.alloc(IMAGE_BYTES)]), headerLength: Buffer.byteLength(header) };
}

describe("--exit-timeout-secs reached with ONNX Runtime executions running", () => {
  it("answers every accepted request (200, or 503 for those still queued) and exits 1 without aborting", async () => {
    // --log-verbose 1 logs each request as the server takes it in: the test's view of "accepted".
    const server = await startServer({ args: ["--model-control-mode", "explicit", "--load-model", "resnet50", "--exit-timeout-secs", "1", "--log-verbose", "1"] });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server.process.once("exit", (code, signal) => resolve({ code, signal })));
    const { body, headerLength } = resnetRequest();
    // One connection per request, so a reset shows up as a failed request rather than a retried one.
    const agent = new Agent({ connections: null, pipelining: 0 });
    const requestCount = 96;
    const answers = Array.from({ length: requestCount }, () =>
      fetch(`${server.httpUrl}/v2/models/resnet50/infer`, {
        method: "POST", body, headers: { "Inference-Header-Content-Length": String(headerLength) }, dispatcher: agent,
      } as RequestInit).then(
        async (response) => ({ status: response.status, text: response.status === 200 ? "" : await response.text() }),
        (error: Error) => ({ status: 0, text: String((error.cause as Error | undefined)?.message ?? error.message) }),
      ));
    // SIGTERM once the server has taken in every request. A fixed pause raced the machine's load: on busy cores the
    // listener had not yet accepted some connections when it closed, and those were reset, which is what a closing
    // server does to a connection it never took (the client retries elsewhere); it is not a lost request.
    const requestLine = "HTTP request: POST /v2/models/resnet50/infer";
    try {
      await waitFor(`the server to take in ${requestCount} requests`, 60_000, async () =>
        server.logs().split(requestLine).length - 1 >= requestCount ? true : undefined);
    } catch (error) {
      server.process.kill("SIGKILL");
      throw error;
    }
    server.process.kill("SIGTERM");
    const results = await Promise.all(answers);
    const { code, signal } = await exited;
    await agent.close();

    if (signal !== null || code !== 1) console.log("SERVER LOGS", server.logs().slice(-3000));
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    expect(server.logs()).not.toContain("terminate called");
    const unanswered = results.filter((r) => r.status !== 200 && r.status !== 503);
    expect(unanswered).toEqual([]);
    const refused = results.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.some((r) => r.text.includes("exit timeout"))).toBe(true);
  }, 120_000);
});

describe("--exit-timeout-secs reached with a TypeScript model's execute() spinning forever", () => {
  it("ends the stuck execution (503) and exits 1 within seconds", async () => {
    const repository = mkdtempSync(path.join(os.tmpdir(), "forced-exit-"));
    writeProbeModel(repository, { name: "probe" });
    const server = await startServer({ repository, args: ["--exit-timeout-secs", "2"] });
    try {
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        server.process.once("exit", (code, signal) => resolve({ code, signal })));
      const stuck = fetch(`${server.httpUrl}/v2/models/probe/infer`, {
        method: "POST", body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1] }], parameters: { behave: "spin" } }),
      }).then((response) => response.status, () => 0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      server.process.kill("SIGTERM");
      // 2 s of exit timeout, then the default unload_timeout_ms (5 s): bounded, not a measure of speed.
      expect(await exited).toEqual({ code: 1, signal: null });
      expect(await stuck).toBe(503);
    } finally {
      server.process.kill("SIGKILL");
      rmSync(repository, { recursive: true, force: true });
    }
  });
});
