import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { ClosedLoopLoad } from "./closed-loop-load";
import { check, round, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { GrpcStressClient, type Outcome, restCall } from "./stress-clients";
import { ScratchRepository, type StressPaths, type StressServer, startStressServer } from "./stress-server";

export interface StuckModelSettings {
  /** Closed-loop clients per protocol on the healthy model. */
  readonly clientsPerProtocol: number;
  /** Requests sent at once to the model whose execute() never returns. */
  readonly stuckRequests: number;
  /** The stuck model's unload_timeout_ms. */
  readonly unloadTimeoutMs: number;
  /** The server's --exit-timeout-secs for the SIGTERM part. */
  readonly exitTimeoutSecs: number;
  readonly timeoutMs: number;
}

const STUCK = "stuck";
const HEALTHY = "healthy";

/** A TypeScript model whose execute() spins forever: what a bug in a model's loop looks like to the server. */
const SPINNING_MODEL_JS = "module.exports = class { execute() { for (;;); } };\n";

function writeSpinningModel(repository: string, unloadTimeoutMs: number): void {
  mkdirSync(path.join(repository, STUCK, "1"), { recursive: true });
  writeFileSync(path.join(repository, STUCK, "1", "model.js"), SPINNING_MODEL_JS);
  writeFileSync(path.join(repository, STUCK, "config.pbtxt"), `backend: "typescript"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1, 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 1, 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1, 16 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters [ { key: "unload_timeout_ms" value: { string_value: "${unloadTimeoutMs}" } } ]
`);
}

/** CPU seconds the process (all its threads) has used so far, from /proc; undefined once it is gone. */
function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after "pid (comm) ".
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Healthy REST + gRPC load on `server` while `during` runs; the healthy requests' outcomes. */
async function healthyLoadDuring(server: StressServer, settings: StuckModelSettings, during: () => Promise<void>): Promise<Outcome[]> {
  const pool = new Pool(server.httpUrl, { connections: settings.clientsPerProtocol });
  const grpc = new GrpcStressClient(server.grpcAddress);
  const restRequest = simpleRestRequest(HEALTHY);
  const grpcRequest = grpc.encode(simpleGrpcMessage(HEALTHY));
  const senders = [
    ...Array.from({ length: settings.clientsPerProtocol }, () => () => restCall(pool, server.httpUrl, restRequest, settings.timeoutMs)),
    ...Array.from({ length: settings.clientsPerProtocol }, () => () => grpc.modelInferBytes(grpcRequest, settings.timeoutMs)),
  ];
  const load = new ClosedLoopLoad(senders);
  try {
    await sleep(300);
    await during();
    await sleep(300);
  } finally {
    await load.stop();
    grpc.close();
    await pool.close();
  }
  return load.records.map((r) => r.outcome);
}

const describeFailure = (outcomes: readonly Outcome[]): string => {
  const first = outcomes[0];
  return first === undefined ? "" : ` (first: ${first.kind} ${first.status} ${first.detail})`;
};

/**
 * (g) A TypeScript model whose execute() never returns, under load: `stuckRequests` requests wait on it over
 * REST while REST and gRPC clients keep another model busy; then the stuck model is unloaded, and last the server
 * gets SIGTERM with a request stuck again. Passes when the unload answers and fails every stuck request with 503
 * within unload_timeout_ms plus a margin, the healthy model loses no request, the terminated worker stops
 * burning CPU (under half a core afterwards), and SIGTERM ends the process with status 1 within the exit timeout
 * plus unload_timeout_ms plus a margin.
 */
export async function runStuckModelScenario(paths: StressPaths, settings: StuckModelSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const marginMs = 15_000;
  const repository = new ScratchRepository(paths);
  repository.copyExample("simple", HEALTHY);
  writeSpinningModel(repository.path, settings.unloadTimeoutMs);
  const checks: ScenarioCheck[] = [];
  const figures: Record<string, number | string> = {};
  try {
    const server = await startStressServer(paths, repository.path, [
      "--model-control-mode", "explicit", "--load-model", HEALTHY, "--load-model", STUCK, "--exit-timeout-secs", String(settings.exitTimeoutSecs),
    ]);
    const stuckPool = new Pool(server.httpUrl, { connections: settings.stuckRequests + 1 });
    try {
      let stuckOutcomes: Outcome[] = [];
      let unload: Outcome | undefined;
      let unloadMs = Number.NaN;
      log(`(g) ${settings.stuckRequests} requests stuck in a spinning execute() under healthy load, then unload`);
      const healthy = await healthyLoadDuring(server, settings, async () => {
        const stuck = Array.from({ length: settings.stuckRequests }, () => restCall(stuckPool, server.httpUrl, simpleRestRequest(STUCK), settings.timeoutMs));
        await sleep(1000);
        const unloadStart = performance.now();
        unload = await restCall(stuckPool, server.httpUrl, { method: "POST", path: `/v2/repository/models/${STUCK}/unload`, headers: { "content-type": "application/json" }, body: "{}" }, settings.unloadTimeoutMs + marginMs);
        unloadMs = performance.now() - unloadStart;
        stuckOutcomes = await Promise.all(stuck);
      });
      const cpuBefore = cpuSeconds(server.process.pid);
      await sleep(2000);
      const cpuAfter = cpuSeconds(server.process.pid);
      const coresAfterUnload = cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : (cpuAfter - cpuBefore) / 2;
      const healthyFailures = healthy.filter((o) => o.kind !== "ok");
      const stuckNot503 = stuckOutcomes.filter((o) => o.status !== "503");
      checks.push(
        check("the unload answers within unload_timeout_ms + 15 s", unload?.kind === "ok" && unloadMs <= settings.unloadTimeoutMs + marginMs, `${unload?.status ?? "none"} after ${round(unloadMs / 1000, 2)} s`),
        check("every stuck request is answered 503", stuckNot503.length === 0, `${stuckOutcomes.length - stuckNot503.length} of ${stuckOutcomes.length}${describeFailure(stuckNot503)}`),
        check("0 failed requests on the healthy model", healthyFailures.length === 0, `${healthyFailures.length} of ${healthy.length} failed${describeFailure(healthyFailures)}`),
        check("the stuck worker no longer burns CPU after the unload (< 0.5 core)", coresAfterUnload < 0.5, `${round(coresAfterUnload, 2)} cores over 2 s`),
      );
      Object.assign(figures, { healthyRequests: healthy.length, healthyFailures: healthyFailures.length, stuckRequests: stuckOutcomes.length, unloadSeconds: round(unloadMs / 1000, 2), coresAfterUnload: round(coresAfterUnload, 2) });

      log(`(g) SIGTERM with a request stuck again (--exit-timeout-secs ${settings.exitTimeoutSecs})`);
      await restCall(stuckPool, server.httpUrl, { method: "POST", path: `/v2/repository/models/${STUCK}/load`, headers: { "content-type": "application/json" }, body: "{}" }, settings.timeoutMs);
      const stuckAgain = restCall(stuckPool, server.httpUrl, simpleRestRequest(STUCK), settings.timeoutMs);
      await sleep(500);
      const signalMs = performance.now();
      process.kill(server.process.pid!, "SIGTERM");
      const limitMs = settings.exitTimeoutSecs * 1000 + settings.unloadTimeoutMs + marginMs;
      const exit = await Promise.race([server.process.exited, sleep(limitMs).then(() => undefined)]);
      const exitMs = performance.now() - signalMs;
      const lastStuck = await stuckAgain;
      checks.push(check(
        "SIGTERM exits 1 within exit timeout + unload_timeout_ms + 15 s", exit?.code === 1,
        exit === undefined ? `still running after ${round(limitMs / 1000, 1)} s` : `code ${exit.code} after ${round(exitMs / 1000, 2)} s; the stuck request got ${lastStuck.status}`,
      ));
      figures["sigtermExitSeconds"] = round(exitMs / 1000, 2);
    } finally {
      await stuckPool.close();
      await server.process.stop(5_000);
    }
  } finally {
    repository.dispose();
  }
  return scenarioResult("g", "a TypeScript model whose execute() never returns, under load (unload, SIGTERM)", startedMs, checks, figures);
}
