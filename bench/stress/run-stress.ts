#!/usr/bin/env node
/**
 * `npm run stress`: the stress campaign against the real server binary on 127.0.0.1 (see README, "Stress
 * campaign"): (a) generated malformed requests over REST and gRPC, (b) 10x overload on a bounded queue, (c)
 * SIGTERM under resnet50 load, (d) model reload under load in poll and explicit mode, (e) a soak of mixed load,
 * (f) repeated resnet50 overload bursts (memory retained, not leaked), (g) a TypeScript model whose execute() never
 * returns, unloaded and then SIGTERMed under load, (h) long client-supplied names under load, (i) big requests at the
 * default limits (peak RSS per request, health latency meanwhile, the in-flight budget's refusals), (j) cross-site
 * requests and DNS rebinding against every API that changes the server, under load, (k) streams: flow control,
 * cancellation, clients that read nothing, unload and SIGTERM with streams open, (l) bodies that try to slip past the
 * in-flight budget, (m) model calls (BLS) that would wait on their own ancestors' instances.
 * Bounded in time and count; writes stress-report.md and stress-report.json; exits 1 when a check failed.
 */
import os from "node:os";
import path from "node:path";
import { CommanderError } from "@commander-js/extra-typings";
import { ensureExampleRepository } from "../../tools/model-builder/index";
import { findPackageRoot } from "../../common/find-package-root";
import { describeSystem } from "../system-setup";
import { runBigRequestsScenario } from "./big-requests-scenario";
import { runBlsCyclesScenario } from "./bls-cycles-scenario";
import { runBudgetEvasionScenario } from "./budget-evasion-scenario";
import { runBurstRetentionScenario } from "./burst-retention-scenario";
import { runCrossSiteScenario } from "./cross-site-scenario";
import { runLongNamesScenario } from "./long-names-scenario";
import { runMalformedScenario } from "./malformed-scenario";
import { runOverloadScenario } from "./overload-scenario";
import { runReloadScenario } from "./reload-scenario";
import type { ScenarioResult, StressLog } from "./scenario-result";
import { runSigtermScenario } from "./sigterm-scenario";
import { runSoakScenario } from "./soak-scenario";
import { runStreamsScenario } from "./streams-scenario";
import { runStuckModelScenario } from "./stuck-model-scenario";
import { parseStressOptions, type ScenarioId, type StressOptions } from "./stress-options";
import { writeStressReport } from "./stress-report";
import type { StressPaths } from "./stress-server";

/** Runs the scenarios the options name, in order, each against servers of its own. */
export async function runStressCampaign(options: StressOptions, paths: StressPaths, log: StressLog): Promise<ScenarioResult[]> {
  const runners: Record<ScenarioId, () => Promise<ScenarioResult>> = {
    a: () => runMalformedScenario(paths, options.malformed, log),
    b: () => runOverloadScenario(paths, options.overload, log),
    c: () => runSigtermScenario(paths, options.sigterm, log),
    d: () => runReloadScenario(paths, options.reload, log),
    e: () => runSoakScenario(paths, options.soak, log),
    f: () => runBurstRetentionScenario(paths, options.bursts, log),
    g: () => runStuckModelScenario(paths, options.stuckModel, log),
    h: () => runLongNamesScenario(paths, options.longNames, log),
    i: () => runBigRequestsScenario(paths, options.bigRequests, log),
    j: () => runCrossSiteScenario(paths, options.crossSite, log),
    k: () => runStreamsScenario(paths, options.streams, log),
    l: () => runBudgetEvasionScenario(paths, options.budgetEvasion, log),
    m: () => runBlsCyclesScenario(paths, options.blsCycles, log),
  };
  const results: ScenarioResult[] = [];
  for (const id of options.scenarios) {
    const result = await runners[id]();
    log(`(${id}) ${result.passed ? "PASS" : "FAIL"} in ${(result.durationMs / 1000).toFixed(1)} s: ${result.checks.map((c) => `${c.passed ? "ok" : "FAILED"} ${c.name}: ${c.detail}`).join("; ")}`);
    results.push(result);
  }
  return results;
}

async function main(): Promise<void> {
  const root = findPackageRoot(__dirname);
  const log: StressLog = (line) => void process.stderr.write(`${line}\n`);
  let options: StressOptions;
  try {
    options = parseStressOptions(process.argv.slice(2), root);
  } catch (error) {
    process.exit(error instanceof CommanderError ? error.exitCode : 2);
  }
  const exampleRepository = path.join(root, "models");
  await ensureExampleRepository(exampleRepository);
  const system = describeSystem(root);
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = os.loadavg().map((l) => l.toFixed(2)).join(" / ");
  const results = await runStressCampaign(options, { repositoryRoot: root, exampleRepository }, log);
  const files = await writeStressReport(options.outDir, {
    command: ["npm run stress", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(" "), startedAt, loadAverageAtStart, seed: options.malformed.seed,
    mallocMmapThreshold: process.env["MALLOC_MMAP_THRESHOLD_"] ?? "unset (glibc's dynamic threshold)",
    machine: `${system.cpuModel}, ${system.cores} cores, ${system.memoryGiB} GiB; Node ${system.node}, onnxruntime-node ${system.onnxruntime}, server ${system.server}`,
  }, results);
  log(`report: ${files.join(", ")}`);
  process.exitCode = results.every((r) => r.passed) ? 0 : 1;
}

if (require.main === module) void main();
