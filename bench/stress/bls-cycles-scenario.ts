import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Pool } from "undici";
import { check, round, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { type Outcome, restCall } from "./stress-clients";
import { ScratchRepository, type StressPaths, startStressServer } from "./stress-server";

export interface BlsCyclesSettings {
  /** Rounds of each shape of calls. */
  readonly rounds: number;
  readonly timeoutMs: number;
}

/**
 * A TypeScript model that calls itself: with `depth` > 0 it makes `fanout` calls to itself at once, each with
 * depth - 1, and answers its input once they answered; a refused call fails the request with the callee's code.
 * Each call holds an instance of the model while it waits, so enough of them at once close a cycle of waits.
 */
const FAN_MODEL_JS = String.raw`
"use strict";
const { isModelCallError } = require("gcp-inference-stack/typescript-backend");
const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
class Fan {
  async execute(requests, context) {
    return Promise.all(requests.map(async (request) => {
      const depth = Number(request.parameters.depth ?? 0);
      const fanout = Number(request.parameters.fanout ?? 1);
      const input = request.inputs.INPUT0;
      if (depth <= 0) {
        await pause();
        return { outputs: { OUTPUT0: input } };
      }
      try {
        const calls = Array.from({ length: fanout }, () => context.infer("fan", { INPUT0: input }, { request, parameters: { depth: depth - 1, fanout } }));
        await Promise.all(calls);
        return { outputs: { OUTPUT0: input } };
      } catch (error) {
        if (isModelCallError(error)) return { error: { code: error.code, message: error.message } };
        throw error;
      }
    }));
  }
}
module.exports = Fan;
`;

function writeFanModel(repository: string, name: string, instances: number): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "1", "model.js"), FAN_MODEL_JS);
  writeFileSync(path.join(repository, name, "config.pbtxt"), [
    'backend: "typescript"', "max_batch_size: 0",
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]',
    `instance_group [ { count: ${instances} kind: KIND_CPU } ]`,
  ].join("\n"));
}

/** The shapes the audit found hanging: two instances calling themselves with two requests, and depth 3, fan-out 2 on four. */
const SHAPES = [
  { instances: 2, requests: 2, depth: 1, fanout: 1 },
  { instances: 4, requests: 2, depth: 3, fanout: 2 },
] as const;

const CYCLE_REFUSAL = /refused: (all \d+ instances of 'fan' version 1 are held by executions that wait, in a cycle with this one|it would wait for an instance of 'fan' version 1)/;

/**
 * (m) Model calls (BLS) that would wait on their own ancestors' instances: for each shape, `rounds` rounds of
 * requests sent at once to a model calling itself. Passes when every request is answered - with its output, or
 * refused UNAVAILABLE naming the cycle - within the timeout (none hangs), and the server answers health after.
 */
export async function runBlsCyclesScenario(paths: StressPaths, settings: BlsCyclesSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const repository = new ScratchRepository(paths);
  const checks: ScenarioCheck[] = [];
  const figures: Record<string, number | string> = {};
  try {
    const server = await startStressServer(paths, repository.path, ["--model-control-mode", "explicit"]);
    try {
      for (const shape of SHAPES) {
        const name = `fan_${shape.instances}`;
        writeFanModel(repository.path, "fan", shape.instances);
        await fetch(`${server.httpUrl}/v2/repository/models/fan/load`, { method: "POST", signal: AbortSignal.timeout(settings.timeoutMs) });
        log(`(m) ${settings.rounds} rounds of ${shape.requests} requests at once, depth ${shape.depth}, fan-out ${shape.fanout}, ${shape.instances} instances`);
        const pool = new Pool(server.httpUrl, { connections: shape.requests });
        const outcomes: Outcome[] = [];
        try {
          for (let round = 0; round < settings.rounds; round++) {
            const body = JSON.stringify({
              inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1], data: [round] }], parameters: { depth: shape.depth, fanout: shape.fanout },
            });
            const request = { method: "POST" as const, path: "/v2/models/fan/infer", headers: { "content-type": "application/json" }, body };
            outcomes.push(...await Promise.all(Array.from({ length: shape.requests }, () => restCall(pool, server.httpUrl, request, settings.timeoutMs))));
          }
        } finally {
          await pool.close();
        }
        const answered = outcomes.filter((o) => o.kind === "ok");
        const refused = outcomes.filter((o) => o.status === "503" && CYCLE_REFUSAL.test(o.detail));
        const other = outcomes.filter((o) => !answered.includes(o) && !refused.includes(o));
        const slowest = Math.max(...outcomes.map((o) => o.latencyMs));
        checks.push(check(
          `${name}: every request answered or refused as a cycle, none hangs`, other.length === 0,
          `${answered.length} answered, ${refused.length} refused, ${other.length} other${other[0] === undefined ? "" : ` (first: ${other[0].kind} ${other[0].status} ${other[0].detail})`}; slowest ${round(slowest)} ms`,
        ));
        Object.assign(figures, { [`${name}Answered`]: answered.length, [`${name}Refused`]: refused.length, [`${name}SlowestMs`]: round(slowest) });
      }
      const health = await fetch(`${server.httpUrl}/v2/health/live`, { signal: AbortSignal.timeout(settings.timeoutMs) }).catch(() => undefined);
      checks.push(check("the server answers health afterwards", health?.status === 200, `${health?.status ?? "no answer"}`));
    } finally {
      await server.process.stop(5_000);
    }
  } finally {
    repository.dispose();
  }
  return scenarioResult("m", "model calls (BLS) that would wait on their own ancestors' instances", startedMs, checks, figures);
}
