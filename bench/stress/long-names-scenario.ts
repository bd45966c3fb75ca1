import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { ClosedLoopLoad } from "./closed-loop-load";
import { check, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { GrpcStressClient, type Outcome, restCall } from "./stress-clients";
import { type StressPaths, startStressServer } from "./stress-server";

export interface LongNamesSettings {
  readonly durationMs: number;
  /** Closed-loop clients per protocol sending valid requests. */
  readonly clientsPerProtocol: number;
  /** Closed-loop clients per protocol sending requests with a long name. */
  readonly longNameClientsPerProtocol: number;
  /** Characters of each long name. */
  readonly nameLength: number;
  readonly timeoutMs: number;
}

/** The most characters of one name an error message may echo (the server's MAX_ECHOED_CHARS). */
const MAX_ECHOED_CHARS = 256;

/**
 * (h) Long names under load: valid REST and gRPC requests to `simple`, sharing their connections (one gRPC channel,
 * one HTTP pool) with requests naming an unknown model of `nameLength` characters (gRPC) and an unknown input of
 * as many (REST). Passes when no valid request fails, and every long-name request is refused for what it is
 * (NOT_FOUND / 400) echoing at most 256 characters of the name: an echoed name once made a gRPC trailer
 * larger than clients' 8 KiB metadata limit, which failed every call sharing the connection.
 */
export async function runLongNamesScenario(paths: StressPaths, settings: LongNamesSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const server = await startStressServer(paths, paths.exampleRepository, ["--model-control-mode", "explicit", "--load-model", "simple"]);
  const clients = settings.clientsPerProtocol + settings.longNameClientsPerProtocol;
  const pool = new Pool(server.httpUrl, { connections: clients });
  const grpc = new GrpcStressClient(server.grpcAddress);
  const longName = "a".repeat(settings.nameLength);
  const validRest = simpleRestRequest("simple");
  const validGrpc = grpc.encode(simpleGrpcMessage("simple"));
  const unknownModel = grpc.encode(simpleGrpcMessage(longName));
  const body = JSON.parse(validRest.body as string) as { inputs: { name: string }[] };
  body.inputs[0]!.name = longName;
  const unknownInput = { ...validRest, body: JSON.stringify(body) };
  const valid: Outcome[] = [];
  const refusals: Outcome[] = [];
  const record = (into: Outcome[], send: () => Promise<Outcome>) => async (): Promise<Outcome> => {
    const outcome = await send();
    into.push(outcome);
    return outcome;
  };
  const repeat = <T>(count: number, make: () => T): T[] => Array.from({ length: count }, make);
  log(`(h) ${2 * settings.clientsPerProtocol} valid and ${2 * settings.longNameClientsPerProtocol} long-name clients (${settings.nameLength} characters) for ${settings.durationMs} ms`);
  const load = new ClosedLoopLoad([
    ...repeat(settings.clientsPerProtocol, () => record(valid, () => restCall(pool, server.httpUrl, validRest, settings.timeoutMs))),
    ...repeat(settings.clientsPerProtocol, () => record(valid, () => grpc.modelInferBytes(validGrpc, settings.timeoutMs))),
    ...repeat(settings.longNameClientsPerProtocol, () => record(refusals, () => restCall(pool, server.httpUrl, unknownInput, settings.timeoutMs))),
    ...repeat(settings.longNameClientsPerProtocol, () => record(refusals, () => grpc.modelInferBytes(unknownModel, settings.timeoutMs))),
  ]);
  try {
    await sleep(settings.durationMs);
  } finally {
    await load.stop();
    grpc.close();
    await pool.close();
    await server.process.stop();
  }
  const failedValid = valid.filter((o) => o.kind !== "ok");
  // An outcome keeps the first 300 characters of a message: enough to hold more of the name than may be echoed.
  const echoedTooMuch = "a".repeat(MAX_ECHOED_CHARS + 1);
  const wrongRefusals = refusals.filter((o) => !["NOT_FOUND", "400"].includes(o.status) || o.detail.includes(echoedTooMuch));
  const first = (outcomes: readonly Outcome[]): string => (outcomes[0] === undefined ? "" : ` (first: ${outcomes[0].kind} ${outcomes[0].status} ${outcomes[0].detail.slice(0, 120)})`);
  return scenarioResult("h", "long client-supplied names under load (both protocols, shared connections)", startedMs, [
    check("0 failed valid requests", failedValid.length === 0 && valid.length > 0, `${failedValid.length} of ${valid.length} failed${first(failedValid)}`),
    check("every long-name request refused (NOT_FOUND / 400) with a short message", wrongRefusals.length === 0 && refusals.length > 0, `${refusals.length - wrongRefusals.length} of ${refusals.length}${first(wrongRefusals)}`),
  ], { validRequests: valid.length, validFailures: failedValid.length, longNameRequests: refusals.length, nameLength: settings.nameLength });
}
