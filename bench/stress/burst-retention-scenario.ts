import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { ClosedLoopLoad, Sampler } from "./closed-loop-load";
import { resnetRequest } from "./resnet-request";
import { check, round, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { restCall } from "./stress-clients";
import { residentMiB, type StressPaths, startStressServer } from "./stress-server";

export interface BurstSettings {
  readonly bursts: number;
  readonly burstMs: number;
  readonly connections: number;
  /** Quiet time after each burst before RSS is read. */
  readonly idleMs: number;
  readonly timeoutMs: number;
}

/**
 * (f) Repeated resnet50 overload bursts (200 connections, unbounded queue) with quiet time between: memory
 * retained after a burst (allocator and ONNX Runtime arena) must not grow from one burst to the next - RSS after
 * the last burst within 5% of RSS after the first - and every request is served.
 */
export async function runBurstRetentionScenario(paths: StressPaths, settings: BurstSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const server = await startStressServer(paths, paths.exampleRepository, ["--model-control-mode", "explicit", "--load-model", "resnet50"]);
  const pool = new Pool(server.httpUrl, { connections: settings.connections });
  const request = resnetRequest();
  const send = () => restCall(pool, server.httpUrl, request, settings.timeoutMs);
  try {
    for (let i = 0; i < 3; i++) await send();
    await sleep(settings.idleMs);
    const idleMiB = residentMiB(server.process.pid)!;
    const afterBurstMiB: number[] = [];
    let requests = 0;
    let failures = 0;
    let peakMiB = idleMiB;
    for (let burst = 1; burst <= settings.bursts; burst++) {
      log(`(f) burst ${burst}/${settings.bursts}: ${settings.connections} connections on resnet50 for ${settings.burstMs} ms`);
      const memory = new Sampler(() => residentMiB(server.process.pid), 250);
      const load = new ClosedLoopLoad(Array.from({ length: settings.connections }, () => send), { rampMs: 1000 });
      await sleep(settings.burstMs);
      await load.stop();
      await sleep(settings.idleMs);
      memory.stop();
      peakMiB = Math.max(peakMiB, memory.peak());
      afterBurstMiB.push(residentMiB(server.process.pid)!);
      requests += load.records.length;
      failures += load.records.filter((r) => r.outcome.kind !== "ok").length;
    }
    const first = afterBurstMiB[0]!;
    const last = afterBurstMiB.at(-1)!;
    const growthPercent = ((last - first) / first) * 100;
    return scenarioResult("f", "repeated overload bursts: retention, not a leak", startedMs, [
      check("every request served", failures === 0, `${failures} of ${requests} failed`),
      check("RSS after the last burst within 5% of after the first", growthPercent < 5, `${afterBurstMiB.map((m) => round(m)).join(" -> ")} MiB (${round(growthPercent, 2)}%)`),
    ], {
      bursts: settings.bursts, connections: settings.connections, requests, rssIdleMiB: round(idleMiB), rssPeakMiB: round(peakMiB),
      rssAfterBurstsMiB: afterBurstMiB.map((m) => round(m)).join(" "), retainedAfterFirstMiB: round(first - idleMiB),
    });
  } finally {
    await pool.close();
    await server.process.stop();
  }
}
