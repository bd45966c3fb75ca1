import { appendFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { ClosedLoopLoad } from "./closed-loop-load";
import { check, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { GrpcStressClient, type Outcome, restCall } from "./stress-clients";
import { ScratchRepository, type StressPaths, type StressServer, startStressServer } from "./stress-server";

export interface ReloadSettings {
  /** Reloads per mode (poll and explicit). */
  readonly reloads: number;
  /** Closed-loop clients per protocol. */
  readonly clientsPerProtocol: number;
  readonly timeoutMs: number;
}

const MODEL = "reloaded";

interface ModeResult {
  readonly reloads: number;
  readonly requests: number;
  readonly failures: readonly Outcome[];
}

/** Runs `reload` `count` times under REST + gRPC load on the model; returns what the clients saw. */
async function underLoad(server: StressServer, settings: ReloadSettings, reload: (index: number) => Promise<void>): Promise<ModeResult> {
  const pool = new Pool(server.httpUrl, { connections: settings.clientsPerProtocol });
  const grpc = new GrpcStressClient(server.grpcAddress);
  // Built and encoded once: every client sends the same request.
  const restRequest = simpleRestRequest(MODEL);
  const grpcRequest = grpc.encode(simpleGrpcMessage(MODEL));
  const rest = () => restCall(pool, server.httpUrl, restRequest, settings.timeoutMs);
  const viaGrpc = () => grpc.modelInferBytes(grpcRequest, settings.timeoutMs);
  const load = new ClosedLoopLoad([...Array.from({ length: settings.clientsPerProtocol }, () => rest), ...Array.from({ length: settings.clientsPerProtocol }, () => viaGrpc)]);
  try {
    await sleep(300);
    for (let i = 0; i < settings.reloads; i++) await reload(i);
    await sleep(300);
  } finally {
    await load.stop();
    grpc.close();
    await pool.close();
  }
  const outcomes = load.records.map((r) => r.outcome);
  return { reloads: settings.reloads, requests: outcomes.length, failures: outcomes.filter((o) => o.kind !== "ok") };
}

/** Resolves once the server's log holds `count` matches of `pattern`; rejects after `timeoutMs`. */
async function logged(server: StressServer, pattern: RegExp, count: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((server.process.logs().match(pattern) ?? []).length < count) {
    if (performance.now() > deadline) throw new Error(`the server did not log ${pattern} ${count} times within ${timeoutMs} ms`);
    await sleep(50);
  }
}

function modeChecks(mode: string, result: ModeResult): ScenarioCheck[] {
  const first = result.failures[0];
  return [
    check(`${mode}: ${result.reloads} reloads done under load`, result.requests > 0, `${result.requests} requests during ${result.reloads} reloads`),
    check(`${mode}: 0 failed requests`, result.failures.length === 0, `${result.failures.length} failed${first ? ` (first: ${first.kind} ${first.status} ${first.detail})` : ""}`),
  ];
}

/**
 * (d) Model reload under load, both ways Triton offers: poll mode notices an edited config and reloads the model,
 * and explicit mode's `POST /v2/repository/models/{m}/load` reloads it, `reloads` times each, while REST and
 * gRPC clients keep sending. Not one request may fail: the new version takes new requests, the old one answers
 * what it accepted.
 */
export async function runReloadScenario(paths: StressPaths, settings: ReloadSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const repository = new ScratchRepository(paths);
  const modelDirectory = repository.copyExample("simple", MODEL);
  let poll: ModeResult;
  let explicit: ModeResult;
  try {
    log(`(d) ${settings.reloads} poll-mode reloads under load`);
    const polling = await startStressServer(paths, repository.path, ["--model-control-mode", "poll", "--repository-poll-secs", "1"]);
    try {
      poll = await underLoad(polling, settings, async (index) => {
        // The poll compares sizes and modification times: a comment line changes both.
        appendFileSync(path.join(modelDirectory, "config.pbtxt"), `\n# reload ${index + 1}\n`);
        await logged(polling, new RegExp(`poll: reloaded '${MODEL}'`, "g"), index + 1, 10_000);
      });
    } finally {
      await polling.process.stop();
    }
    log(`(d) ${settings.reloads} explicit reloads under load`);
    const explicitServer = await startStressServer(paths, repository.path, ["--model-control-mode", "explicit", "--load-model", MODEL]);
    const control = new Pool(explicitServer.httpUrl, { connections: 1 });
    try {
      explicit = await underLoad(explicitServer, settings, async () => {
        const answer = await restCall(control, explicitServer.httpUrl, { method: "POST", path: `/v2/repository/models/${MODEL}/load`, headers: { "content-type": "application/json" }, body: "{}" }, 30_000);
        if (answer.kind !== "ok") throw new Error(`load answered ${answer.status}: ${answer.detail}`);
        await sleep(200);
      });
    } finally {
      await control.close();
      await explicitServer.process.stop();
    }
  } finally {
    repository.dispose();
  }
  return scenarioResult("d", "model reload under load (poll and explicit)", startedMs, [...modeChecks("poll", poll), ...modeChecks("explicit", explicit)], {
    reloadsPerMode: settings.reloads, clients: 2 * settings.clientsPerProtocol,
    pollRequests: poll.requests, pollFailures: poll.failures.length, explicitRequests: explicit.requests, explicitFailures: explicit.failures.length,
  });
}
