import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "undici";
import { ClosedLoopLoad } from "./closed-loop-load";
import { check, round, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { resnetRequest } from "./resnet-request";
import { type Outcome, restCall } from "./stress-clients";
import { type StressPaths, startStressServer } from "./stress-server";

export interface SigtermSettings {
  /** Steady load before the signal. */
  readonly loadMs: number;
  /** Closed-loop clients, each on a connection of its own. */
  readonly clients: number;
  readonly timeoutMs: number;
}

const isRefusal = (outcome: Outcome): boolean => outcome.kind === "rejected" || outcome.kind === "refused";

/**
 * (c) SIGTERM under steady resnet50 load: closed-loop clients (one connection each, so every failure is
 * attributable) and a readiness probe every 20 ms, then SIGTERM. Readiness must turn false no later than the first
 * refused request, every request the server had accepted must be answered 200 (none reset or lost), new work is
 * refused (503 or no connection), and the process exits 0 after the drain.
 */
export async function runSigtermScenario(paths: StressPaths, settings: SigtermSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const server = await startStressServer(paths, paths.exampleRepository, ["--model-control-mode", "explicit", "--load-model", "resnet50"]);
  const request = resnetRequest();
  const connections = Array.from({ length: settings.clients }, () => new Client(server.httpUrl, { pipelining: 1 }));
  const probeConnection = new Client(server.httpUrl);
  const probes: { atMs: number; ready: boolean }[] = [];
  let probing = true;
  const probeLoop = (async () => {
    while (probing) {
      const outcome = await restCall(probeConnection, server.httpUrl, { method: "GET", path: "/v2/health/ready" }, settings.timeoutMs);
      probes.push({ atMs: performance.now(), ready: outcome.status === "200" });
      await sleep(20);
    }
  })();
  let signalMs = Number.POSITIVE_INFINITY;
  // A client stops at its first refusal after the signal: the server is telling it to go elsewhere.
  const load = new ClosedLoopLoad(
    connections.map((connection) => () => restCall(connection, server.httpUrl, request, settings.timeoutMs)),
    { finished: (record) => record.startMs >= signalMs && isRefusal(record.outcome) },
  );
  try {
    log(`(c) ${settings.clients} clients on resnet50 for ${settings.loadMs} ms, then SIGTERM`);
    await sleep(settings.loadMs);
    signalMs = performance.now();
    process.kill(server.process.pid!, "SIGTERM");
    const exit = await server.process.exited;
    const exitMs = performance.now();
    await load.done();
    probing = false;
    await probeLoop;

    const records = load.records;
    const before = records.filter((r) => r.startMs < signalMs);
    const inFlightAtSignal = before.filter((r) => r.startMs + r.outcome.latencyMs >= signalMs);
    const lost = records.filter((r) => r.outcome.kind === "reset" || r.outcome.kind === "hang");
    const failedBefore = before.filter((r) => r.startMs + r.outcome.latencyMs < signalMs && r.outcome.kind !== "ok");
    const refusals = records.filter((r) => isRefusal(r.outcome)).map((r) => r.startMs + r.outcome.latencyMs);
    const firstRefusalMs = refusals.length > 0 ? Math.min(...refusals) : Number.POSITIVE_INFINITY;
    const firstNotReadyMs = probes.find((p) => p.atMs >= signalMs && !p.ready)?.atMs ?? Number.POSITIVE_INFINITY;
    const readyAfterRefusal = probes.filter((p) => p.ready && p.atMs > firstRefusalMs).length;
    const servedBefore = before.filter((r) => r.outcome.kind === "ok").length;
    return scenarioResult("c", "SIGTERM under steady resnet50 load", startedMs, [
      check("steady load before the signal", servedBefore > 0 && failedBefore.length === 0, `${servedBefore} served, ${failedBefore.length} failed before SIGTERM`),
      check("readiness false no later than the first refusal", readyAfterRefusal === 0 && firstNotReadyMs <= exitMs, `not ready ${round(firstNotReadyMs - signalMs)} ms after SIGTERM; first refusal ${round(firstRefusalMs - signalMs)} ms after; ${readyAfterRefusal} 'ready' answers after a refusal`),
      check("every request in flight at SIGTERM answered 200", inFlightAtSignal.every((r) => r.outcome.kind === "ok"), `${inFlightAtSignal.filter((r) => r.outcome.kind === "ok").length} of ${inFlightAtSignal.length} completed`),
      check("lost accepted requests = 0 (no reset, no hang)", lost.length === 0, `${lost.length} lost${lost[0] ? ` (first: ${lost[0].outcome.status} ${lost[0].outcome.detail})` : ""}`),
      check("exits 0 after the drain", exit.code === 0 && exit.signal === null, `exit code ${exit.code}, signal ${exit.signal}`),
    ], {
      clients: settings.clients, servedBeforeSignal: servedBefore, inFlightAtSignal: inFlightAtSignal.length,
      completedAfterSignal: inFlightAtSignal.filter((r) => r.outcome.kind === "ok").length, refusedAfterSignal: refusals.length,
      lostAccepted: lost.length, notReadyAfterMs: round(firstNotReadyMs - signalMs), firstRefusalAfterMs: round(firstRefusalMs - signalMs),
      drainMs: round(exitMs - signalMs), exitCode: String(exit.code),
    }, exit.code === 0 ? [] : [server.process.logs().slice(-2000)]);
  } finally {
    probing = false;
    await Promise.all([...connections, probeConnection].map((c) => c.destroy()));
    await server.process.stop();
  }
}
