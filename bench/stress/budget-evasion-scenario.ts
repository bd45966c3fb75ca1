import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { Readable } from "node:stream";
import { deflateSync } from "node:zlib";
import { Pool } from "undici";
import { budgetBoundCheck, check, round, type ScenarioCheck, type ScenarioResult, scenarioResult, type StressLog } from "./scenario-result";
import { GrpcStressClient, type Outcome, restCall } from "./stress-clients";
import { simpleGrpcMessage, simpleRestRequest } from "./simple-requests";
import { memory, ScratchRepository, type StressPaths, type StressServer, startStressServer } from "./stress-server";

export interface BudgetEvasionSettings {
  /** The server's --max-inflight-request-bytes. */
  readonly budgetBytes: number;
  /** Deflate bodies sent at once, each `bombInflatedBytes` of zeros once inflated (the audit's: 24 of 64 MiB). */
  readonly bombs: number;
  readonly bombInflatedBytes: number;
  /** Chunked bodies (no Content-Length) sent at once, each `chunkedBodyBytes` long. */
  readonly chunkedBodies: number;
  readonly chunkedBodyBytes: number;
  /** Connections that announce a `slowSenderBytes` body and send one byte of it (the audit's: 16 of 64 MiB). */
  readonly slowSenders: number;
  readonly slowSenderBytes: number;
  readonly timeoutMs: number;
}

const MiB = 1024 * 1024;

/** `bytes` of zeros in 1 MiB pieces, as a stream undici sends chunked. */
function chunkedZeros(bytes: number): Readable {
  return Readable.from((function* pieces() {
    for (let sent = 0; sent < bytes; sent += MiB) yield Buffer.alloc(Math.min(MiB, bytes - sent));
  })());
}

/** The server's peak RSS above its resident set while `send` runs, and what it returned. */
async function peakDuring<T>(server: StressServer, send: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  const pid = server.process.pid!;
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = memory(pid).rss;
  const result = await send();
  return { result, peakBytes: memory(pid).peak - before };
}

/** Connections to 127.0.0.1:port that announce `bytes` with Expect: 100-continue, resolved once each was told to go on. */
function slowSenders(port: number, count: number, bytes: number, timeoutMs: number): Promise<Socket[]> {
  return Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(
      `POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\nExpect: 100-continue\r\n\r\n`,
    ));
    const timer = setTimeout(() => reject(new Error("no 100 Continue")), timeoutMs);
    socket.once("data", () => {
      clearTimeout(timer);
      socket.write("{");
      resolve(socket);
    });
    socket.once("error", reject);
  })));
}

/**
 * The budget's refusals (503), and the outcomes that say the server broke (5xx, a hang, a refused connection). A
 * reset is not one: a body refused part-way has its connection closed unread, which a client still sending it may
 * see before the 503.
 */
function refusedOrAnswered(outcomes: readonly Outcome[]): { refused: number; resets: number; broken: Outcome[] } {
  return {
    refused: outcomes.filter((o) => o.status === "503").length,
    resets: outcomes.filter((o) => o.kind === "reset").length,
    broken: outcomes.filter((o) => o.kind === "server-error" || o.kind === "hang" || o.kind === "refused"),
  };
}

/**
 * (l) Bodies that tried to slip past the in-flight budget (issue 41): deflate bombs (small compressed, large
 * inflated) and chunked bodies sent at once, each group against a small --max-inflight-request-bytes, then
 * connections that announce large bodies and send almost nothing while ordinary requests go on. Passes when the
 * budget refuses part of each burst (503) and the server's peak RSS stays within the budget's stated bound
 * ({@link budgetBoundCheck}: the budget plus a few of the burst's largest body), and the slow senders leave REST and
 * gRPC requests answered.
 */
export async function runBudgetEvasionScenario(paths: StressPaths, settings: BudgetEvasionSettings, log: StressLog): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const repository = new ScratchRepository(paths);
  repository.copyExample("simple", "simple");
  const checks: ScenarioCheck[] = [];
  const figures: Record<string, number | string> = {};
  try {
    const server = await startStressServer(paths, repository.path, ["--max-inflight-request-bytes", String(settings.budgetBytes)]);
    const pool = new Pool(server.httpUrl, { connections: Math.max(settings.bombs, settings.chunkedBodies) + 2 });
    const grpc = new GrpcStressClient(server.grpcAddress);
    try {
      const burst = async (name: string, count: number, largestBytes: number, request: () => Parameters<typeof restCall>[2]): Promise<void> => {
        log(`(l) ${name}`);
        const { result: outcomes, peakBytes } = await peakDuring(server, () => Promise.all(Array.from({ length: count }, () => restCall(pool, server.httpUrl, request(), settings.timeoutMs))));
        const { refused, resets, broken } = refusedOrAnswered(outcomes);
        figures[`${name}: refused 503 / reset`] = `${refused} / ${resets} of ${count}`;
        figures[`${name}: peak RSS MiB`] = round(peakBytes / MiB);
        checks.push(
          check(`${name}: the budget refuses part (503), the rest answered, none broken`, refused > 0 && broken.length === 0,
            `${refused} refused, ${resets} reset of ${count}${broken[0] === undefined ? "" : `; ${broken.length} broken (${broken[0].status}: ${broken[0].detail.slice(0, 120)})`}`),
          budgetBoundCheck(name, peakBytes, settings.budgetBytes, largestBytes),
        );
      };
      const bomb = deflateSync(Buffer.alloc(settings.bombInflatedBytes));
      await burst(`${settings.bombs} deflate bodies of ${round(bomb.byteLength / 1024)} KB (${round(settings.bombInflatedBytes / MiB)} MiB inflated)`, settings.bombs, settings.bombInflatedBytes, () => ({
        method: "POST", path: "/v2/models/simple/infer", headers: { "content-type": "application/json", "content-encoding": "deflate" }, body: bomb,
      }));
      await burst(`${settings.chunkedBodies} chunked bodies of ${round(settings.chunkedBodyBytes / MiB)} MiB`, settings.chunkedBodies, settings.chunkedBodyBytes, () => ({
        method: "POST", path: "/v2/models/simple/infer", headers: { "content-type": "application/json" }, body: chunkedZeros(settings.chunkedBodyBytes),
      }));

      log(`(l) ${settings.slowSenders} connections announcing ${round(settings.slowSenderBytes / MiB)} MiB, one byte sent`);
      const senders = await slowSenders(Number(new URL(server.httpUrl).port), settings.slowSenders, settings.slowSenderBytes, settings.timeoutMs);
      try {
        const rest = await restCall(pool, server.httpUrl, simpleRestRequest("simple"), settings.timeoutMs);
        const viaGrpc = await grpc.modelInferBytes(grpc.encode(simpleGrpcMessage("simple")), settings.timeoutMs);
        checks.push(check("slow senders holding announced bodies leave REST and gRPC requests answered", rest.kind === "ok" && viaGrpc.kind === "ok",
          `REST ${rest.status} ${rest.detail.slice(0, 120)}, gRPC ${viaGrpc.status} ${viaGrpc.detail.slice(0, 120)}`));
      } finally {
        for (const sender of senders) sender.destroy();
      }
    } finally {
      grpc.close();
      await pool.close();
      await server.process.stop(5_000);
    }
  } finally {
    repository.dispose();
  }
  return scenarioResult("l", "bodies that slip past the in-flight budget: deflate bombs, chunked bodies, slow senders", startedMs, checks, figures);
}
