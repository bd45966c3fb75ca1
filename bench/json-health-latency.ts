#!/usr/bin/env node
/**
 * How long health checks wait while the server handles one very large JSON tensor (issue 15, defect 8c):
 * a JSON INT64 request (outputs back as binary) and a JSON FP32 response (input sent as binary), each while
 * /v2/health/live is polled every 10 ms on its own connection. Prints the request time and the slowest and
 * p99 health answer. `--server-root` points at another build (another checkout's root, after `npm run build`
 * there) to compare, e.g. `node dist/bench/json-health-latency.js --server-root ../main`.
 */
import http from "node:http";
import path from "node:path";
import { setTimeout } from "node:timers/promises";
import { parseArgs } from "node:util";
import { ensureExampleRepository } from "../tools/model-builder/index";
import { findPackageRoot } from "../common/find-package-root";
import { startInferenceServerProcess } from "../tools/tune/index";

interface Sample {
  readonly requestMs: number;
  readonly healthMs: number[];
}

function send(url: string, body: Buffer, headers: Record<string, string>, agent?: http.Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: body.byteLength > 0 ? "POST" : "GET", agent, headers: { ...headers, "content-length": body.byteLength } }, (response) => {
      response.resume();
      response.on("end", () => (response.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${url}: HTTP ${response.statusCode}`))));
    });
    request.on("error", reject);
    request.end(body);
  });
}

async function measure(baseUrl: string, inferPath: string, body: Buffer, headers: Record<string, string>): Promise<Sample> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const health = (): Promise<number> => send(`${baseUrl}/v2/health/live`, Buffer.alloc(0), {}, agent);
  await health();
  const healthMs: number[] = [];
  let done = false;
  // Every 10 ms, not back to back: a flood of health checks would itself compete with the request for the CPU.
  const polling = (async () => {
    while (!done) {
      healthMs.push(await health());
      await setTimeout(10);
    }
  })();
  const requestMs = await send(`${baseUrl}${inferPath}`, body, headers).finally(() => (done = true));
  await polling;
  agent.destroy();
  return { requestMs, healthMs };
}

function line(name: string, bodyBytes: number, sample: Sample): string {
  const sorted = [...sample.healthMs].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
  return `${name}: body ${(bodyBytes / 1e6).toFixed(1)} MB, request ${sample.requestMs.toFixed(0)} ms; health answers: ${sorted.length}, slowest ${sorted.at(-1)?.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { "server-root": { type: "string" }, elements: { type: "string", default: "7500000" } } });
  const root = findPackageRoot(__dirname);
  const serverRoot = path.resolve(values["server-root"] ?? root);
  const elements = Number(values.elements);
  const models = path.join(root, "models");
  await ensureExampleRepository(models);
  const server = await startInferenceServerProcess(models, [
    "--allow-grpc", "false", "--allow-metrics", "false", "--http-max-input-size", String(1 << 30),
    "--model-control-mode", "explicit", "--load-model", "identity_int64", "--load-model", "identity_fp32",
  ], serverRoot);
  try {
    const int64Json = Buffer.from(JSON.stringify({
      inputs: [{ name: "INPUT0", datatype: "INT64", shape: [1, elements], data: Array.from({ length: elements }, (_, i) => 1_000_000 + (i % 8_999_999)) }],
      parameters: { binary_data_output: true },
    }));
    const fp32 = Float32Array.from({ length: elements }, (_, i) => Math.sin(i));
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, elements], parameters: { binary_data_size: fp32.byteLength } }] }));
    const fp32Binary = Buffer.concat([header, Buffer.from(fp32.buffer)]);
    console.log(`server: ${serverRoot}; ${elements} elements per tensor`);
    const decode = await measure(server.httpUrl, "/v2/models/identity_int64/infer", int64Json, { "content-type": "application/json" });
    console.log(line("INT64 JSON request, binary output", int64Json.byteLength, decode));
    const encode = await measure(server.httpUrl, "/v2/models/identity_fp32/infer", fp32Binary, { "inference-header-content-length": String(header.byteLength) });
    console.log(line("FP32 binary request, JSON output", fp32Binary.byteLength, encode));
  } finally {
    await server.process.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
