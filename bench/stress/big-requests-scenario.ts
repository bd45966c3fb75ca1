import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { healthDuring } from "./health-during";
import { budgetBoundCheck, check, percentile, round, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { GrpcStressClient, type Outcome, restCall, type RestRequest } from "./stress-clients";
import { memory, ScratchRepository, type StressPaths, type StressServer, startStressServer } from "./stress-server";

export interface BigRequestsSettings {
  /** Bytes of each request body or gRPC message: the server's default limit (--http-max-input-size, --grpc-max-message-size). */
  readonly bodyBytes: number;
  /** gRPC messages beyond the default limit, which must be refused without costing their size. */
  readonly oversizedGrpcBytes: readonly number[];
  /** Most bytes of a request's peak RSS per byte of its body. */
  readonly maxRssPerBodyByte: number;
  /** Longest p99 of /v2/health/live, polled every 10 ms, while one request is decoded. */
  readonly maxHealthP99Ms: number;
  /** The budget scenario's --max-inflight-request-bytes, and the requests sent at once against it (half per protocol). */
  readonly budgetBytes: number;
  readonly budgetRequests: number;
  readonly timeoutMs: number;
}

const MiB = 1024 * 1024;
/**
 * Peak memory of a message of typed BYTES contents per byte of it: parsing makes an object per element (1M of them,
 * each a protobuf `bytes` field; on a worker thread since 2026-11-27), on top of the message and the joined tensor.
 * Raw contents, which Triton's clients send, stay within the scenario's bound.
 */
const TYPED_BYTES_RSS_PER_BODY_BYTE = 8;

/** BYTES elements per request: the default --max-bytes-elements. */
const BYTES_ELEMENTS = 1 << 20;

/** An identity model `name` of one `type` tensor of any length, whose executions each take `delayMs`. */
function writeIdentity(repository: string, name: string, type: string, delayMs: number): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: ${type} dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: ${type} dims: [ -1 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${delayMs}" } } ]
`);
}

/** `count` copies of `token` joined by commas, as bytes (a JSON array's inside without building a string). */
function repeatedTokens(token: string, count: number): Buffer {
  const unit = Buffer.from(`${token},`);
  const bytes = Buffer.allocUnsafe(unit.byteLength * count - 1);
  bytes.fill(unit);
  return bytes;
}

/** A JSON infer body whose one input's data is `data` (the array's inside), output asked for as binary. */
function jsonBody(model: string, datatype: string, count: number, data: Buffer): RestRequest {
  const head = Buffer.from(`{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[${count}],"data":[`);
  const tail = Buffer.from(`]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`);
  return { method: "POST", path: `/v2/models/${model}/infer`, headers: { "content-type": "application/json" }, body: Buffer.concat([head, data, tail]) };
}

/** `count` BYTES elements of `size` bytes each, in Triton's binary layout (a 4-byte little-endian length before each). */
function bytesElements(count: number, size: number): Buffer {
  const unit = Buffer.alloc(4 + size, 0x61);
  unit.writeUInt32LE(size, 0);
  const bytes = Buffer.allocUnsafe(unit.byteLength * count);
  bytes.fill(unit);
  return bytes;
}

/** A binary-extension infer body: a JSON header, then `raw` as INPUT0's bytes. */
function binaryBody(model: string, datatype: string, count: number, raw: Buffer): RestRequest {
  const header = Buffer.from(JSON.stringify({
    inputs: [{ name: "INPUT0", datatype, shape: [count], parameters: { binary_data_size: raw.byteLength } }],
    outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
  }));
  return {
    method: "POST", path: `/v2/models/${model}/infer`,
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(header.byteLength) },
    body: Buffer.concat([header, raw]),
  };
}

function grpcMessage(model: string, datatype: string, count: number, raw: Buffer): Record<string, unknown> {
  return { model_name: model, inputs: [{ name: "INPUT0", datatype, shape: [count] }], raw_input_contents: [raw] };
}

interface Measured {
  readonly outcome: Outcome;
  readonly peakMiB: number;
  readonly ratio: number;
  readonly healthP99Ms: number;
  readonly healthMaxMs: number;
}

/** One request alone on the server: its outcome, the server's peak RSS above its resident set before, the health latencies meanwhile. */
async function measureOne(server: StressServer, bodyBytes: number, send: () => Promise<Outcome>): Promise<Measured> {
  const pid = server.process.pid!;
  // Let the previous request's garbage go first; a fresh peak from the resident set now.
  await sleep(1500);
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = memory(pid).rss;
  const { result: outcome, healthMs } = await healthDuring(server, send);
  const peak = memory(pid).peak - before;
  return {
    outcome, peakMiB: round(peak / MiB), ratio: round(peak / bodyBytes, 2),
    healthP99Ms: round(percentile(healthMs, 99)), healthMaxMs: round(Math.max(...healthMs)),
  };
}

/**
 * (i) Big requests, memory and the event loop: one request at a time at the default size limits (a numeric JSON
 * body, `NaN` tokens, BYTES tensors of 1M elements as binary, JSON and gRPC (raw and typed `bytes_contents`), a
 * numeric gRPC message), each while /v2/health/live is polled every 10 ms; gRPC messages beyond the default limit; then many big requests at once
 * against a small --max-inflight-request-bytes. Passes when each request costs at most `maxRssPerBodyByte` times
 * its body in peak RSS, health p99 stays within `maxHealthP99Ms`, oversized gRPC messages are refused
 * RESOURCE_EXHAUSTED, and the budget refuses some requests 503 / RESOURCE_EXHAUSTED, completes the others, and keeps
 * the server's peak RSS within its stated bound ({@link budgetBoundCheck}).
 */
export async function runBigRequestsScenario(paths: StressPaths, settings: BigRequestsSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const repository = new ScratchRepository(paths);
  writeIdentity(repository.path, "big_int32", "TYPE_INT32", 0);
  writeIdentity(repository.path, "big_fp32", "TYPE_FP32", 0);
  writeIdentity(repository.path, "big_bytes", "TYPE_STRING", 0);
  writeIdentity(repository.path, "slow_int32", "TYPE_INT32", 1500);
  const checks: ScenarioCheck[] = [];
  const figures: Record<string, number | string> = {};
  const body = settings.bodyBytes - 4096; // room for the JSON around the data
  try {
    const server = await startStressServer(paths, repository.path, []);
    const pool = new Pool(server.httpUrl, { connections: 2 });
    const grpc = new GrpcStressClient(server.grpcAddress);
    try {
      const rest = (request: RestRequest) => (): Promise<Outcome> => restCall(pool, server.httpUrl, request, settings.timeoutMs);
      const elementSize = Math.floor(body / BYTES_ELEMENTS) - 4;
      const int32Count = Math.floor(body / 11);
      const cases: [string, number, () => Promise<Outcome>, number][] = [];
      const add = (name: string, request: RestRequest): void => {
        cases.push([name, (request.body as Buffer).byteLength, rest(request), settings.maxRssPerBodyByte]);
      };
      add("REST JSON INT32", jsonBody("big_int32", "INT32", int32Count, repeatedTokens("-123456789", int32Count)));
      add("REST JSON NaN", jsonBody("big_fp32", "FP32", Math.floor(body / 4), repeatedTokens("NaN", Math.floor(body / 4))));
      add("REST binary BYTES 1M", binaryBody("big_bytes", "BYTES", BYTES_ELEMENTS, bytesElements(BYTES_ELEMENTS, elementSize)));
      add("REST JSON BYTES 1M", jsonBody("big_bytes", "BYTES", BYTES_ELEMENTS, repeatedTokens(`"${"a".repeat(elementSize - 3)}"`, BYTES_ELEMENTS)));
      add("REST binary INT32", binaryBody("big_int32", "INT32", body / 4, Buffer.alloc(body)));
      const grpcCase = (name: string, message: Buffer, maxRatio = settings.maxRssPerBodyByte): void => {
        cases.push([name, message.byteLength, () => grpc.modelInferBytes(message, settings.timeoutMs), maxRatio]);
      };
      grpcCase("gRPC BYTES 1M", grpc.encode(grpcMessage("big_bytes", "BYTES", BYTES_ELEMENTS, bytesElements(BYTES_ELEMENTS, elementSize))));
      const element = Buffer.alloc(elementSize, 0x61);
      grpcCase("gRPC BYTES 1M typed", grpc.encode({
        model_name: "big_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [BYTES_ELEMENTS], contents: { bytes_contents: Array.from({ length: BYTES_ELEMENTS }, () => element) } }],
      }), TYPED_BYTES_RSS_PER_BODY_BYTE);
      grpcCase("gRPC INT32", grpc.encode(grpcMessage("big_int32", "INT32", body / 4, Buffer.alloc(body))));
      for (const [name, bytes, send, maxRatio] of cases) {
        log(`(i) ${name}: ${round(bytes / MiB)} MiB`);
        const measured = await measureOne(server, bytes, send);
        log(`(i)   ${measured.outcome.status}: +${measured.peakMiB} MiB (${measured.ratio}x), health p99 ${measured.healthP99Ms} ms, max ${measured.healthMaxMs} ms`);
        figures[`${name}: body MiB`] = round(bytes / MiB);
        figures[`${name}: peak RSS MiB`] = measured.peakMiB;
        figures[`${name}: health p99 / max ms`] = `${measured.healthP99Ms} / ${measured.healthMaxMs}`;
        checks.push(
          check(`${name} answered`, measured.outcome.kind === "ok", `${measured.outcome.status} in ${round(measured.outcome.latencyMs)} ms ${measured.outcome.detail.slice(0, 120)}`),
          check(`${name} peak RSS <= ${maxRatio}x body`, measured.ratio <= maxRatio, `+${measured.peakMiB} MiB for ${round(bytes / MiB)} MiB (${measured.ratio}x)`),
          check(`${name} health p99 <= ${settings.maxHealthP99Ms} ms`, measured.healthP99Ms <= settings.maxHealthP99Ms, `p99 ${measured.healthP99Ms} ms, max ${measured.healthMaxMs} ms`),
        );
      }
      for (const size of settings.oversizedGrpcBytes) {
        const name = `gRPC ${round(size / MiB, 0)} MiB message`;
        log(`(i) ${name}`);
        const message = grpc.encode(grpcMessage("big_int32", "INT32", size / 4, Buffer.alloc(size)));
        const measured = await measureOne(server, size, () => grpc.modelInferBytes(message, settings.timeoutMs));
        figures[`${name}: peak RSS MiB`] = measured.peakMiB;
        checks.push(check(
          `${name} refused RESOURCE_EXHAUSTED, costing <= ${settings.maxRssPerBodyByte}x the default limit`,
          measured.outcome.status === "RESOURCE_EXHAUSTED" && measured.peakMiB * MiB <= settings.maxRssPerBodyByte * settings.bodyBytes,
          `${measured.outcome.status}, +${measured.peakMiB} MiB, health p99 ${measured.healthP99Ms} ms`,
        ));
      }
    } finally {
      grpc.close();
      await pool.close();
      await server.process.stop(5_000);
    }

    log(`(i) ${settings.budgetRequests} requests of ${round(body / MiB)} MiB at once, --max-inflight-request-bytes ${settings.budgetBytes}`);
    const budgeted = await startStressServer(paths, repository.path, ["--max-inflight-request-bytes", String(settings.budgetBytes)]);
    const budgetPool = new Pool(budgeted.httpUrl, { connections: settings.budgetRequests });
    const budgetGrpc = new GrpcStressClient(budgeted.grpcAddress);
    try {
      const raw = Buffer.alloc(body);
      const restRequest = binaryBody("slow_int32", "INT32", body / 4, raw);
      const grpcRequest = budgetGrpc.encode(grpcMessage("slow_int32", "INT32", body / 4, raw));
      const pid = budgeted.process.pid!;
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
      const before = memory(pid).rss;
      const outcomes = await Promise.all(Array.from({ length: settings.budgetRequests }, (_, i) => (i % 2 === 0
        ? restCall(budgetPool, budgeted.httpUrl, restRequest, settings.timeoutMs)
        : budgetGrpc.modelInferBytes(grpcRequest, settings.timeoutMs))));
      const peak = memory(pid).peak - before;
      const refused = outcomes.filter((o) => o.status === "503" || o.status === "RESOURCE_EXHAUSTED");
      const ok = outcomes.filter((o) => o.kind === "ok");
      const after = await restCall(budgetPool, budgeted.httpUrl, restRequest, settings.timeoutMs);
      Object.assign(figures, {
        "budget: requests": outcomes.length, "budget: answered": ok.length, "budget: refused": refused.length, "budget: peak RSS MiB": round(peak / MiB),
      });
      checks.push(
        // Each request needs its copies beside its body: bodies that arrived at once leave one another too little,
        // but the first admitted still goes through (BudgetLease.admit), and none may fail otherwise.
        check("the in-flight budget refuses what exceeds it (503 / RESOURCE_EXHAUSTED), answers the rest", refused.length > 0 && ok.length > 0 && ok.length + refused.length === outcomes.length,
          `${ok.length} answered, ${refused.length} refused of ${outcomes.length}${refused[0] === undefined ? "" : ` (${refused[0].status}: ${refused[0].detail.slice(0, 160)})`}`),
        check("a request after the burst is answered (the budget is given back)", after.kind === "ok", after.status),
        budgetBoundCheck(`${settings.budgetRequests} requests at once`, peak, settings.budgetBytes, settings.bodyBytes),
      );
    } finally {
      budgetGrpc.close();
      await budgetPool.close();
      await budgeted.process.stop(5_000);
    }
  } finally {
    repository.dispose();
  }
  return scenarioResult("i", "big requests at the default limits: peak RSS per request, health latency, the in-flight budget", startedMs, checks, figures);
}
