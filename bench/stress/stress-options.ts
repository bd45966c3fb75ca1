import path from "node:path";
import { Command } from "@commander-js/extra-typings";
import { knownList, positiveInteger } from "../option-parsers";
import type { BigRequestsSettings } from "./big-requests-scenario";
import type { BlsCyclesSettings } from "./bls-cycles-scenario";
import type { BudgetEvasionSettings } from "./budget-evasion-scenario";
import type { BurstSettings } from "./burst-retention-scenario";
import type { CrossSiteSettings } from "./cross-site-scenario";
import type { LongNamesSettings } from "./long-names-scenario";
import type { MalformedSettings } from "./malformed-scenario";
import type { OverloadSettings } from "./overload-scenario";
import type { ReloadSettings } from "./reload-scenario";
import type { SigtermSettings } from "./sigterm-scenario";
import type { SoakSettings } from "./soak-scenario";
import type { StreamsSettings } from "./streams-scenario";
import type { StuckModelSettings } from "./stuck-model-scenario";

export type ScenarioId = "a" | "b" | "c" | "d" | "e" | "f" | "g" | "h" | "i" | "j" | "k" | "l" | "m";
const SCENARIOS: readonly ScenarioId[] = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"];
const MiB = 1024 * 1024;

/** Everything one campaign runs with; every figure is bounded in time and count. */
export interface StressOptions {
  readonly short: boolean;
  readonly scenarios: readonly ScenarioId[];
  readonly malformed: MalformedSettings;
  readonly overload: OverloadSettings;
  readonly sigterm: SigtermSettings;
  readonly reload: ReloadSettings;
  readonly soak: SoakSettings;
  readonly bursts: BurstSettings;
  readonly stuckModel: StuckModelSettings;
  readonly longNames: LongNamesSettings;
  readonly bigRequests: BigRequestsSettings;
  readonly crossSite: CrossSiteSettings;
  readonly streams: StreamsSettings;
  readonly budgetEvasion: BudgetEvasionSettings;
  readonly blsCycles: BlsCyclesSettings;
  readonly outDir: string;
}

/**
 * The short profile: (a)-(d), (g), (h) and (j)-(m) in about a minute on 2 cores, as `npm test` runs them (its
 * (l) against a 64 MiB budget); the soak is left out. The full profile (`npm run stress`) sends twice the malformed
 * requests, overloads and loads for longer, reloads ten times per mode, soaks for ten minutes, runs (k) and (l) at
 * the audit's sizes (100,000-token streams; a 256 MiB budget, 64 MiB bodies) and adds (f), three resnet50 overload
 * bursts, and (i), big
 * requests at the default limits (gigabytes of memory and minutes on 2 cores).
 */
export function stressProfile(short: boolean, seed: number, outDir: string): StressOptions {
  return {
    short,
    scenarios: short ? ["a", "b", "c", "d", "g", "h", "j", "k", "l", "m"] : SCENARIOS,
    malformed: { count: short ? 300 : 600, seed, timeoutMs: 10_000 },
    // Stopping waits for the queue to drain: (max_queue_size + 1) executions.
    overload: { durationMs: short ? 3_000 : 20_000, queueSize: short ? 4 : 8, executionMs: short ? 500 : 1_000, timeoutMs: 30_000 },
    sigterm: { loadMs: short ? 2_000 : 10_000, clients: short ? 8 : 16, timeoutMs: 60_000 },
    reload: { reloads: short ? 2 : 10, clientsPerProtocol: 3, timeoutMs: 10_000 },
    soak: { durationMs: 600_000, seed, timeoutMs: 30_000 },
    bursts: { bursts: 3, burstMs: 20_000, connections: 200, idleMs: 8_000, timeoutMs: 120_000 },
    stuckModel: { clientsPerProtocol: 3, stuckRequests: short ? 3 : 8, unloadTimeoutMs: 2_000, exitTimeoutSecs: 2, timeoutMs: 60_000 },
    longNames: { durationMs: short ? 3_000 : 15_000, clientsPerProtocol: 3, longNameClientsPerProtocol: 2, nameLength: 20_000, timeoutMs: 10_000 },
    bigRequests: {
      bodyBytes: 64 * 1024 * 1024, oversizedGrpcBytes: short ? [256 * 1024 * 1024] : [256 * 1024 * 1024, 512 * 1024 * 1024],
      maxRssPerBodyByte: 4, maxHealthP99Ms: 100, budgetBytes: 256 * 1024 * 1024, budgetRequests: 8, timeoutMs: 120_000,
    },
    crossSite: { rounds: short ? 5 : 20, clientsPerProtocol: 2, timeoutMs: 10_000 },
    streams: {
      readStreams: short ? 2 : 5, tokens: short ? 20_000 : 100_000, cancelledStreams: short ? 50 : 200, unreadStreams: short ? 10 : 50,
      unreadMs: short ? 2_000 : 10_000, maxHealthP99Ms: 100, maxUnreadGrowthMiB: 128, exitTimeoutSecs: 2, timeoutMs: 60_000,
    },
    budgetEvasion: short
      ? { budgetBytes: 64 * MiB, bombs: 12, bombInflatedBytes: 16 * MiB, chunkedBodies: 6, chunkedBodyBytes: 24 * MiB, slowSenders: 16, slowSenderBytes: 16 * MiB, timeoutMs: 60_000 }
      : { budgetBytes: 256 * MiB, bombs: 24, bombInflatedBytes: 64 * MiB, chunkedBodies: 8, chunkedBodyBytes: 60 * MiB, slowSenders: 16, slowSenderBytes: 64 * MiB, timeoutMs: 120_000 },
    blsCycles: { rounds: short ? 3 : 20, timeoutMs: 30_000 },
    outDir,
  };
}

/** Parses `npm run stress -- <flags>`. */
export function parseStressOptions(argv: readonly string[], repositoryRoot: string): StressOptions {
  const o = new Command("run-stress")
    .description("Stress campaign against the server on 127.0.0.1: (a) malformed requests, (b) overload, (c) SIGTERM under load, (d) reload under load, (e) soak, (f) overload bursts, (g) a stuck TypeScript model, (h) long names, (i) big requests (memory, health latency, in-flight budget), (j) cross-site requests, (k) streams (flow control, cancellation, unread clients, unload and SIGTERM), (l) budget evasion (deflate bombs, chunked bodies, slow senders), (m) model calls (BLS) in cycles of waits")
    .option("--short", "the profile npm test runs: (a)-(d), (g), (h), (j)-(m), short windows", false)
    .option("--scenarios <list>", `scenarios to run, of ${SCENARIOS.join(",")}`, knownList(SCENARIOS, "scenario", { skipEmpty: false }))
    .option("--seed <n>", "fast-check seed of the malformed requests (the same seed sends the same requests)", positiveInteger, 15)
    .option("--malformed <n>", "malformed requests, half REST and half gRPC (default 600, short 300)", positiveInteger)
    .option("--overload-secs <s>", "length of the overload (default 20, short 3)", positiveInteger)
    .option("--soak-secs <s>", "length of the soak (default 600)", positiveInteger)
    .option("--reloads <n>", "reloads per mode under load (default 10, short 2)", positiveInteger)
    .option("--out <dir>", "where stress-report.md and stress-report.json go", path.join(repositoryRoot, "bench", "results", "stress"))
    .exitOverride()
    .parse([...argv], { from: "user" })
    .opts();
  const profile = stressProfile(o.short, o.seed, o.out);
  return {
    ...profile,
    scenarios: o.scenarios ?? profile.scenarios,
    malformed: { ...profile.malformed, count: o.malformed ?? profile.malformed.count },
    overload: { ...profile.overload, durationMs: (o.overloadSecs ?? profile.overload.durationMs / 1000) * 1000 },
    reload: { ...profile.reload, reloads: o.reloads ?? profile.reload.reloads },
    soak: { ...profile.soak, durationMs: (o.soakSecs ?? profile.soak.durationMs / 1000) * 1000 },
  };
}
