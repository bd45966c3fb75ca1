import { type Dispatcher, Pool } from "undici";
import { describeCase, MALFORMED_MODELS, type MalformedCase, sampleMalformedCases } from "./malformed-requests";
import { check, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { GrpcStressClient, type Outcome, type OutcomeKind, restCall } from "./stress-clients";
import { ScratchRepository, type StressPaths, type StressServer, startStressServer } from "./stress-server";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";

export interface MalformedSettings {
  /** Malformed requests in all, half REST and half gRPC. */
  readonly count: number;
  readonly seed: number;
  /** An answer slower than this counts as a hang. */
  readonly timeoutMs: number;
}

interface Tally {
  sent: number;
  byKind: Record<OutcomeKind, number>;
  byStatus: Record<string, number>;
  followUpFailures: number;
}

function emptyTally(): Tally {
  return {
    sent: 0, followUpFailures: 0, byStatus: {},
    byKind: { "ok": 0, "rejected": 0, "client-error": 0, "server-error": 0, "refused": 0, "reset": 0, "hang": 0 },
  };
}

/** A live server and clients for it; replaced when the server dies, so the campaign goes on and counts the crash. */
class Target {
  server!: StressServer;
  pool!: Pool;
  grpc!: GrpcStressClient;
  alive = false;

  constructor(private readonly paths: StressPaths, private readonly repository: string) {}

  async start(): Promise<void> {
    this.server = await startStressServer(this.paths, this.repository, []);
    this.alive = true;
    void this.server.process.exited.then(() => (this.alive = false));
    this.pool = new Pool(this.server.httpUrl, { connections: 2 });
    this.grpc = new GrpcStressClient(this.server.grpcAddress);
  }

  async stop(): Promise<void> {
    this.grpc.close();
    await this.pool.close();
    await this.server.process.stop();
  }
}

/**
 * (a) Malformed requests: `count` generated cases (seeded, fast-check) over REST and gRPC against a server with
 * four models, each followed by a valid request on the same protocol that must succeed. Counts answers by kind
 * and status, crashes (the process died: restarted, counted), hangs and resets.
 */
export async function runMalformedScenario(paths: StressPaths, settings: MalformedSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const repository = new ScratchRepository(paths);
  for (const model of MALFORMED_MODELS) repository.copyExample(model, model);
  const target = new Target(paths, repository.path);
  const tallies = { rest: emptyTally(), grpc: emptyTally() };
  const examples: string[] = [];
  let crashes = 0;
  try {
    await target.start();
    const validRest = simpleRestRequest("simple");
    const validGrpc = target.grpc.encode(simpleGrpcMessage("simple"));
    const cases = sampleMalformedCases(settings.count, settings.seed, validGrpc);
    log(`(a) ${cases.length} malformed requests (seed ${settings.seed}) against ${target.server.httpUrl} and grpc://${target.server.grpcAddress}`);
    for (const [index, entry] of cases.entries()) {
      const tally = tallies[entry.protocol];
      const outcome = await sendMalformed({ pool: target.pool, httpUrl: target.server.httpUrl, grpc: target.grpc }, entry, settings.timeoutMs);
      tally.sent++;
      tally.byKind[outcome.kind]++;
      tally.byStatus[outcome.status] = (tally.byStatus[outcome.status] ?? 0) + 1;
      if (["server-error", "hang", "reset", "refused"].includes(outcome.kind) && examples.length < 20) {
        examples.push(`#${index} ${outcome.kind} ${outcome.status} "${outcome.detail}" <- ${describeCase(entry)}`);
      }
      const followUp = entry.protocol === "rest"
        ? await restCall(target.pool, target.server.httpUrl, validRest, settings.timeoutMs)
        : await target.grpc.modelInferBytes(validGrpc, settings.timeoutMs);
      if (followUp.kind !== "ok") {
        tally.followUpFailures++;
        if (examples.length < 20) examples.push(`#${index} follow-up ${followUp.kind} ${followUp.status} "${followUp.detail}" after ${describeCase(entry)}`);
      }
      if (!target.alive) {
        crashes++;
        examples.push(`#${index} CRASH after ${describeCase(entry)}\n${target.server.process.logs().slice(-2000)}`);
        await target.stop();
        await target.start();
      }
      if ((index + 1) % 100 === 0) log(`(a) ${index + 1}/${cases.length} sent`);
    }
  } finally {
    await target.stop().catch(() => undefined);
    repository.dispose();
  }
  const all = [tallies.rest, tallies.grpc];
  const sum = (pick: (t: Tally) => number): number => all.reduce((total, t) => total + pick(t), 0);
  const sent = sum((t) => t.sent);
  const http5xx = Object.entries(tallies.rest.byStatus).filter(([s]) => s.startsWith("5")).reduce((n, [, c]) => n + c, 0);
  const http4xx = Object.entries(tallies.rest.byStatus).filter(([s]) => s.startsWith("4")).reduce((n, [, c]) => n + c, 0);
  const serverErrors = sum((t) => t.byKind["server-error"]);
  const hangs = sum((t) => t.byKind.hang);
  const resets = sum((t) => t.byKind.reset + t.byKind.refused);
  const followUpFailures = sum((t) => t.followUpFailures);
  return scenarioResult("a", "malformed requests (REST + gRPC, fast-check)", startedMs, [
    check("at least the requested count sent", sent >= settings.count, `${sent} sent (${tallies.rest.sent} REST, ${tallies.grpc.sent} gRPC)`),
    check("no crash", crashes === 0, `${crashes} crashes`),
    check("no hang", hangs === 0, `${hangs} answers slower than ${settings.timeoutMs} ms`),
    check("no internal error (500 / INTERNAL / UNKNOWN)", serverErrors === 0, `${serverErrors} internal errors`),
    check("no reset connection or stream", resets === 0, `${resets} resets`),
    check("every follow-up valid request succeeds", followUpFailures === 0, `${followUpFailures} failed follow-ups`),
  ], {
    seed: settings.seed, sent, restSent: tallies.rest.sent, grpcSent: tallies.grpc.sent,
    rest4xx: http4xx, rest5xx: http5xx, rest2xx: tallies.rest.byKind.ok,
    grpcClientErrors: tallies.grpc.byKind["client-error"], grpcUnavailable: tallies.grpc.byKind.rejected, grpcOk: tallies.grpc.byKind.ok,
    internalErrors: serverErrors, crashes, hangs, resets, followUpFailures,
    restStatuses: JSON.stringify(tallies.rest.byStatus), grpcStatuses: JSON.stringify(tallies.grpc.byStatus),
  }, examples);
}

/** Where a malformed case goes: the server's REST origin over `pool`, its gRPC endpoint over `grpc`. */
export interface MalformedTarget {
  readonly pool: Dispatcher;
  readonly httpUrl: string;
  readonly grpc: GrpcStressClient;
}

/** Sends one malformed case over its protocol; never rejects. */
export function sendMalformed(target: MalformedTarget, entry: MalformedCase, timeoutMs: number): Promise<Outcome> {
  if (entry.protocol === "rest") return restCall(target.pool, target.httpUrl, entry.request, timeoutMs);
  if ("bytes" in entry) return target.grpc.modelInferBytes(entry.bytes, timeoutMs);
  let bytes: Buffer;
  try {
    bytes = target.grpc.encode(entry.message);
  } catch (error) {
    // A generated object protobufjs cannot encode never reaches the server; its noise-bytes cousins do.
    return Promise.resolve({ kind: "client-error", status: "UNENCODABLE", latencyMs: 0, detail: (error as Error).message });
  }
  return target.grpc.modelInferBytes(bytes, timeoutMs);
}
