import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { ClosedLoopLoad, Sampler } from "./closed-loop-load";
import { MALFORMED_MODELS, sampleMalformedCases } from "./malformed-requests";
import { sendMalformed } from "./malformed-scenario";
import { check, percentile, round, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { resnetRequest } from "./resnet-request";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { GrpcStressClient, type Outcome, restCall, type RestRequest } from "./stress-clients";
import { residentMiB, type StressPaths, startStressServer } from "./stress-server";

export interface SoakSettings {
  readonly durationMs: number;
  readonly seed: number;
  readonly timeoutMs: number;
}

/** Triton's BYTES serialization of a few short words, for identity_bytes. */
function bytesRequest(): RestRequest {
  const words = ["alpha", "beta", "gamma", "delta"].map((w) => Buffer.from(w));
  const payload = Buffer.concat(words.flatMap((w) => [Buffer.from(Uint32Array.of(w.byteLength).buffer), w]));
  const header = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 4], parameters: { binary_data_size: payload.byteLength } }] });
  return {
    method: "POST", path: "/v2/models/identity_bytes/infer",
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(Buffer.byteLength(header)) },
    body: Buffer.concat([Buffer.from(header), payload]),
  };
}

const CONTROL_ROUTES: readonly RestRequest[] = [
  { method: "GET", path: "/v2/health/ready" }, { method: "GET", path: "/v2/models/simple" }, { method: "GET", path: "/v2/models/resnet50/config" },
  { method: "GET", path: "/v2/models/stats" }, { method: "POST", path: "/v2/repository/index", body: "{}", headers: { "content-type": "application/json" } },
];

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * (e) Soak: mixed load for `durationMs` - simple over REST JSON and gRPC, resnet50 binary, BYTES, metadata /
 * statistics / health reads and a stream of malformed requests - while the server's RSS is sampled every 2 s.
 * After a warm-up (the first fifth), the RSS at the end (median of the last tenth) must be within 5% of the RSS
 * just after warm-up (median of the next tenth), and no valid request may fail.
 */
export async function runSoakScenario(paths: StressPaths, settings: SoakSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const models = ["resnet50", ...MALFORMED_MODELS];
  const server = await startStressServer(paths, paths.exampleRepository, ["--model-control-mode", "explicit", ...models.flatMap((m) => ["--load-model", m])]);
  const pool = new Pool(server.httpUrl, { connections: 8 });
  const grpc = new GrpcStressClient(server.grpcAddress);
  const simpleGrpc = grpc.encode(simpleGrpcMessage("simple"));
  const malformed = sampleMalformedCases(200, settings.seed, simpleGrpc);
  let nextMalformed = 0;
  const call = (request: RestRequest) => () => restCall(pool, server.httpUrl, request, settings.timeoutMs);
  const valid: (() => Promise<Outcome>)[] = [
    call(simpleRestRequest("simple")), call(simpleRestRequest("simple")),
    () => grpc.modelInferBytes(simpleGrpc, settings.timeoutMs), () => grpc.modelInferBytes(simpleGrpc, settings.timeoutMs),
    call(resnetRequest()), call(bytesRequest()),
    (() => {
      let next = 0;
      return () => restCall(pool, server.httpUrl, CONTROL_ROUTES[next++ % CONTROL_ROUTES.length]!, settings.timeoutMs);
    })(),
  ];
  const hostile = (): Promise<Outcome> => sendMalformed({ pool, httpUrl: server.httpUrl, grpc }, malformed[nextMalformed++ % malformed.length]!, settings.timeoutMs);
  try {
    log(`(e) soak: ${valid.length} valid clients and 1 malformed-request client for ${Math.round(settings.durationMs / 1000)} s`);
    const memory = new Sampler(() => residentMiB(server.process.pid), 2000);
    const load = new ClosedLoopLoad([...valid, hostile]);
    const progress = setInterval(() => log(`(e) ${Math.round((performance.now() - startedMs) / 1000)} s: ${load.records.length} requests, RSS ${round(memory.samples.at(-1)?.value ?? Number.NaN)} MiB`), 60_000);
    await sleep(settings.durationMs);
    clearInterval(progress);
    await load.stop();
    memory.stop();

    const loadStartMs = memory.samples[0]!.atMs;
    const at = (fraction: number): number => loadStartMs + fraction * settings.durationMs;
    const between = (from: number, to: number): number[] => memory.samples.filter((s) => s.atMs >= at(from) && s.atMs < at(to)).map((s) => s.value);
    const baselineMiB = median(between(0.2, 0.3));
    const finalMiB = median(between(0.9, 1.01));
    const growthPercent = ((finalMiB - baselineMiB) / baselineMiB) * 100;
    const hostileWorker = valid.length;
    const validRecords = load.records.filter((r) => r.worker !== hostileWorker);
    const hostileRecords = load.records.filter((r) => r.worker === hostileWorker);
    const failedValid = validRecords.filter((r) => r.outcome.kind !== "ok");
    const badHostile = hostileRecords.filter((r) => ["server-error", "hang", "reset", "refused"].includes(r.outcome.kind));
    return scenarioResult("e", "soak of mixed load", startedMs, [
      check("RSS growth after warm-up < 5%", growthPercent < 5, `${round(baselineMiB)} MiB after warm-up, ${round(finalMiB)} MiB at the end (${round(growthPercent, 2)}%)`),
      check("no valid request fails", failedValid.length === 0, `${failedValid.length} of ${validRecords.length} failed${failedValid[0] ? ` (first: ${failedValid[0].outcome.kind} ${failedValid[0].outcome.status} ${failedValid[0].outcome.detail})` : ""}`),
      check("malformed requests get 4xx / client errors only", badHostile.length === 0, `${badHostile.length} of ${hostileRecords.length} otherwise`),
      check("the server is still up", server.process.pid !== undefined && residentMiB(server.process.pid) !== undefined, "alive at the end"),
    ], {
      durationS: round(settings.durationMs / 1000), requests: load.records.length, validRequests: validRecords.length, malformedRequests: hostileRecords.length,
      requestsPerSecond: round(load.records.length / (settings.durationMs / 1000)), rssBaselineMiB: round(baselineMiB), rssFinalMiB: round(finalMiB),
      rssPeakMiB: round(memory.peak()), rssGrowthPercent: round(growthPercent, 2),
      rssSeriesMiB: memory.samples.map((s) => round(s.value)).join(" "),
    });
  } finally {
    grpc.close();
    await pool.close();
    await server.process.stop();
  }
}
