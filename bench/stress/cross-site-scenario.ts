import { readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { Pool } from "undici";
import { ClosedLoopLoad } from "./closed-loop-load";
import { check, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { GrpcStressClient, type Outcome, restCall, type RestRequest } from "./stress-clients";
import { type StressPaths, startStressServer } from "./stress-server";

export interface CrossSiteSettings {
  /** Rounds of attacks: each round sends every attack on every API once. */
  readonly rounds: number;
  /** Closed-loop clients per protocol sending valid requests meanwhile. */
  readonly clientsPerProtocol: number;
  readonly timeoutMs: number;
}

/** The APIs that change the server, each with a body it would take. */
function changingApis(regionKey: string): readonly { readonly path: string; readonly body: string }[] {
  const inputs = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) }));
  return [
    { path: "/v2/repository/models/simple/unload", body: "{}" },
    { path: "/v2/repository/models/simple/load", body: "{}" },
    { path: "/v2/logging", body: JSON.stringify({ log_verbose_level: 1 }) },
    { path: "/v2/trace/setting", body: JSON.stringify({ trace_rate: "1" }) },
    { path: "/v2/models/simple/trace/setting", body: JSON.stringify({ trace_rate: "1" }) },
    { path: "/v2/systemsharedmemory/region/evil/register", body: JSON.stringify({ key: regionKey, offset: 0, byte_size: 64 }) },
    { path: "/v2/systemsharedmemory/region/out/unregister", body: "" },
    { path: "/v2/systemsharedmemory/unregister", body: "" },
    {
      path: "/v2/models/simple/infer",
      body: JSON.stringify({ inputs, outputs: [{ name: "OUTPUT0", parameters: { shared_memory_region: "out", shared_memory_byte_size: 64, shared_memory_offset: 0 } }] }),
    },
  ];
}

/**
 * (j) Cross-site requests and DNS rebinding under load: while REST and gRPC clients use `simple`, every API that
 * changes the server gets, `rounds` times, the requests a browser on another site can send (a foreign Origin with
 * a text/plain body; another site's Host name with its matching Origin). Passes when every attack is answered
 * 403 with Triton's JSON error, the server's settings, regions and models are unchanged, the shared memory region
 * holds no output, and no valid request fails.
 */
export async function runCrossSiteScenario(paths: StressPaths, settings: CrossSiteSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const regionKey = `/stress-xsite-${process.pid}`;
  writeFileSync(`/dev/shm${regionKey}`, Buffer.alloc(0));
  truncateSync(`/dev/shm${regionKey}`, 64);
  const server = await startStressServer(paths, paths.exampleRepository, ["--model-control-mode", "explicit", "--load-model", "simple", "--allow-client-shm", "true"]);
  const pool = new Pool(server.httpUrl, { connections: settings.clientsPerProtocol + 2 });
  const grpc = new GrpcStressClient(server.grpcAddress);
  const call = (request: RestRequest): Promise<Outcome> => restCall(pool, server.httpUrl, request, settings.timeoutMs);
  const state = async (): Promise<string> => (await Promise.all(
    ["/v2/logging", "/v2/trace/setting", "/v2/models/simple/trace/setting", "/v2/systemsharedmemory/status", "/v2/models/simple/ready"]
      .map(async (path) => `${path} ${(await call({ method: "GET", path })).detail}`),
  )).join("\n");
  const figures: Record<string, number | string> = {};
  try {
    await call({ method: "POST", path: "/v2/systemsharedmemory/region/out/register", body: JSON.stringify({ key: regionKey, offset: 0, byte_size: 64 }) });
    const before = await state();
    const host = `rebind.evil.example:${new URL(server.httpUrl).port}`;
    const attacks: Record<string, string>[] = [
      { origin: "http://evil.example", "content-type": "text/plain" },
      { host, origin: `http://${host}`, "content-type": "application/json" },
    ];
    const valid = grpc.encode(simpleGrpcMessage("simple"));
    const load = new ClosedLoopLoad([
      ...Array.from({ length: settings.clientsPerProtocol }, () => () => call(simpleRestRequest("simple"))),
      ...Array.from({ length: settings.clientsPerProtocol }, () => () => grpc.modelInferBytes(valid, settings.timeoutMs)),
    ]);
    log(`(j) ${settings.rounds} rounds of ${attacks.length} attacks on ${changingApis(regionKey).length} APIs under load`);
    const answers: Outcome[] = [];
    try {
      for (let round = 0; round < settings.rounds; round++) {
        for (const headers of attacks) {
          for (const api of changingApis(regionKey)) answers.push(await call({ method: "POST", path: api.path, headers, body: api.body }));
        }
      }
    } finally {
      await load.stop();
    }
    const after = await state();
    const wrong = answers.filter((a) => a.status !== "403" || !/^\{"error":"(cross-origin request refused|request refused: Host)/.test(a.detail));
    const failed = load.records.filter((r) => r.outcome.kind !== "ok");
    const region = new Int32Array(new Uint8Array(readFileSync(`/dev/shm${regionKey}`)).buffer);
    Object.assign(figures, { attacks: answers.length, refused403: answers.length - wrong.length, validRequests: load.records.length, validFailures: failed.length });
    return scenarioResult("j", "cross-site requests and DNS rebinding against every API that changes the server, under load", startedMs, [
      check("every attack is answered 403 with a JSON error", wrong.length === 0, `${answers.length - wrong.length} of ${answers.length}${wrong[0] === undefined ? "" : ` (first: ${wrong[0].status} ${wrong[0].detail.slice(0, 160)})`}`),
      check("settings, regions and models unchanged, no output written to shared memory", after === before && region.every((v) => v === 0), after === before ? "unchanged" : "changed"),
      check("0 failed valid requests", failed.length === 0, `${failed.length} of ${load.records.length}`),
    ], figures);
  } finally {
    grpc.close();
    await pool.close();
    await server.process.stop(5_000);
    rmSync(`/dev/shm${regionKey}`, { force: true });
  }
}
