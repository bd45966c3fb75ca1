import http, { type IncomingMessage } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type ClientDuplexStream, credentials, makeGenericClientConstructor, Metadata } from "@grpc/grpc-js";
import { loadGrpcServiceDefinitions } from "../../server/index";
import { healthDuring } from "./health-during";
import { check, percentile, round, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { residentMiB, type StressPaths, type StressServer, startStressServer } from "./stress-server";

export interface StreamsSettings {
  /** `/generate_stream` requests read at full speed at once while health is polled. */
  readonly readStreams: number;
  /** Tokens each stream asks text_generator for (`max_tokens`). */
  readonly tokens: number;
  /** ModelStreamInfer calls cancelled after their first token. */
  readonly cancelledStreams: number;
  /** ModelStreamInfer calls whose client reads nothing, and for how long. */
  readonly unreadStreams: number;
  readonly unreadMs: number;
  /** Longest p99 of /v2/health/live, polled every 10 ms, while streams are read, beyond twice its p99 without them. */
  readonly maxHealthP99Ms: number;
  /** Most the server's RSS may grow while clients read nothing. */
  readonly maxUnreadGrowthMiB: number;
  /** The server's --exit-timeout-secs for the SIGTERM part. */
  readonly exitTimeoutSecs: number;
  readonly timeoutMs: number;
}

const MODEL = "text_generator";
const PROMPT = "the quick brown fox jumps over the lazy dog";

/** A `/generate_stream` request; its response stays paused until read. */
function openEventStream(server: StressServer, tokens: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.httpUrl}/v2/models/${MODEL}/generate_stream`, { method: "POST", headers: { "content-type": "application/json" } }, resolve);
    request.on("error", reject);
    request.end(JSON.stringify({ text_input: PROMPT, max_tokens: tokens }));
  });
}

/** Reads an event stream to its end; its events. */
async function countEvents(response: IncomingMessage): Promise<number> {
  let events = 0;
  for await (const chunk of response) for (const byte of chunk as Buffer) if (byte === 0x0a) events++;
  return events / 2;
}

type StreamCall = ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>;

/** ModelStreamInfer calls to text_generator, one request each. */
class StreamCalls {
  readonly #client;
  readonly #method;

  constructor(address: string) {
    const { inference } = loadGrpcServiceDefinitions();
    this.#method = inference["ModelStreamInfer"]!;
    const Client = makeGenericClientConstructor({}, "GRPCInferenceService");
    this.#client = new Client(address, credentials.createInsecure());
  }

  open(tokens: number): StreamCall {
    const method = this.#method;
    const call = this.#client.makeBidiStreamRequest(
      method.path, method.requestSerialize as (m: Record<string, unknown>) => Buffer, method.responseDeserialize as (b: Buffer) => Record<string, unknown>, new Metadata(),
    );
    call.on("error", () => undefined);
    call.write({
      model_name: MODEL, parameters: { max_tokens: { int64_param: String(tokens) } },
      inputs: [{ name: "text_input", datatype: "BYTES", shape: ["1"], contents: { bytes_contents: [Buffer.from(PROMPT)] } }],
    });
    return call;
  }

  close(): void {
    this.#client.close();
  }
}

/** Resolves with the time to the call's first response, or undefined when none came within `timeoutMs`. */
function firstResponse(call: StreamCall, timeoutMs: number): Promise<number | undefined> {
  const start = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    call.once("data", () => {
      clearTimeout(timer);
      resolve(performance.now() - start);
    });
  });
}

/**
 * (k) Streams and their flow control, on text_generator (a decoupled TypeScript model that awaits its sends):
 * health latency while `readStreams` streams of `tokens` tokens are read at full speed; `cancelledStreams` gRPC
 * streams cancelled after their first token (every one must get it); `unreadStreams` gRPC streams whose client
 * reads nothing (the server's memory must not grow with what the model could have produced); an unload and then
 * a SIGTERM with unread streams open (each within its timeout).
 */
export async function runStreamsScenario(paths: StressPaths, settings: StreamsSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const marginMs = 15_000;
  const checks: ScenarioCheck[] = [];
  const figures: Record<string, number | string> = {};
  const server = await startStressServer(paths, paths.exampleRepository, [
    "--model-control-mode", "explicit", "--load-model", MODEL, "--exit-timeout-secs", String(settings.exitTimeoutSecs),
  ]);
  const calls = new StreamCalls(server.grpcAddress);
  try {
    // Health's own latency on this machine now, so that a busy machine does not decide the verdict.
    const { healthMs: idleMs } = await healthDuring(server, () => sleep(1000));
    const idleP99 = percentile(idleMs, 99);
    log(`(k) ${settings.readStreams} streams of ${settings.tokens} tokens read at full speed, health polled`);
    const { result: counts, healthMs } = await healthDuring(server, () => Promise.all(
      Array.from({ length: settings.readStreams }, async () => countEvents(await openEventStream(server, settings.tokens))),
    ));
    const healthP99 = percentile(healthMs, 99);
    const healthBoundMs = settings.maxHealthP99Ms + 2 * idleP99;
    checks.push(
      check(`every stream gets its ${settings.tokens} tokens`, counts.every((c) => c === settings.tokens), counts.join(", ")),
      check(
        `health p99 <= ${settings.maxHealthP99Ms} ms + twice its p99 without streams while streams are read`, healthP99 <= healthBoundMs,
        `p99 ${round(healthP99)} ms (without streams ${round(idleP99)} ms), max ${round(Math.max(...healthMs))} ms over ${healthMs.length} polls`,
      ),
    );
    Object.assign(figures, { healthIdleP99Ms: round(idleP99), healthP99Ms: round(healthP99), healthMaxMs: round(Math.max(...healthMs)) });

    log(`(k) ${settings.cancelledStreams} gRPC streams cancelled after their first token`);
    const cancelled = await Promise.all(Array.from({ length: settings.cancelledStreams }, async () => {
      const call = calls.open(settings.tokens);
      const ms = await firstResponse(call, settings.timeoutMs);
      call.cancel();
      return ms;
    }));
    const got = cancelled.filter((ms): ms is number => ms !== undefined);
    checks.push(check("every cancelled stream got its first token", got.length === settings.cancelledStreams, `${got.length} of ${settings.cancelledStreams}, slowest ${round(Math.max(...got))} ms`));
    Object.assign(figures, { cancelledFirstTokenMaxMs: round(Math.max(...got)) });

    log(`(k) ${settings.unreadStreams} gRPC streams whose client reads nothing for ${settings.unreadMs} ms`);
    await sleep(1000);
    const rssBefore = residentMiB(server.process.pid) ?? Number.NaN;
    const unread = Array.from({ length: settings.unreadStreams }, () => {
      const call = calls.open(settings.tokens);
      call.pause();
      return call;
    });
    await sleep(settings.unreadMs);
    const growth = (residentMiB(server.process.pid) ?? Number.NaN) - rssBefore;
    for (const call of unread) call.cancel();
    checks.push(check(`RSS grows <= ${settings.maxUnreadGrowthMiB} MiB while clients read nothing`, growth <= settings.maxUnreadGrowthMiB, `${round(growth)} MiB`));
    figures["unreadGrowthMiB"] = round(growth);

    log("(k) unload with unread streams open");
    const open = await Promise.all(Array.from({ length: 4 }, () => openEventStream(server, settings.tokens)));
    const unloadStart = performance.now();
    const unload = await fetch(`${server.httpUrl}/v2/repository/models/${MODEL}/unload`, { method: "POST", signal: AbortSignal.timeout(settings.timeoutMs) }).catch(() => undefined);
    const unloadMs = performance.now() - unloadStart;
    for (const response of open) response.destroy();
    checks.push(check("the unload answers within 15 s", unload?.status === 200 && unloadMs <= marginMs, `${unload?.status ?? "none"} after ${round(unloadMs / 1000, 2)} s`));
    figures["unloadSeconds"] = round(unloadMs / 1000, 2);
    await fetch(`${server.httpUrl}/v2/repository/models/${MODEL}/load`, { method: "POST", signal: AbortSignal.timeout(settings.timeoutMs) });

    log(`(k) SIGTERM with unread streams open (--exit-timeout-secs ${settings.exitTimeoutSecs})`);
    const held = await Promise.all(Array.from({ length: 4 }, () => openEventStream(server, settings.tokens)));
    const signalMs = performance.now();
    process.kill(server.process.pid!, "SIGTERM");
    const limitMs = settings.exitTimeoutSecs * 1000 + marginMs;
    const exit = await Promise.race([server.process.exited, sleep(limitMs).then(() => undefined)]);
    const exitMs = performance.now() - signalMs;
    for (const response of held) response.destroy();
    checks.push(check(
      `SIGTERM exits within --exit-timeout-secs + 15 s`, exit !== undefined,
      exit === undefined ? `still running after ${round(limitMs / 1000, 1)} s` : `code ${exit.code} after ${round(exitMs / 1000, 2)} s`,
    ));
    figures["sigtermExitSeconds"] = round(exitMs / 1000, 2);
  } finally {
    calls.close();
    await server.process.stop(5_000);
  }
  return scenarioResult("k", "streams: flow control, cancellation, unread clients, unload and SIGTERM with streams open", startedMs, checks, figures);
}
