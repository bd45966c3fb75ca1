import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { measureThroughput, type RequestSender, type SideMeasurement } from "../tools/perf/index";
import { nextChildMessage, stopChild } from "./child-messages";
import type { LoadProcessMessage, LoadProcessRequest, LoadProcessSettings } from "./load-process-protocol";
import type { MainThreadCpuPerRequest } from "./main-thread-cpu";

/** What the load processes measured together. */
export interface SpreadMeasurement {
  /** Throughput summed over the processes; each latency percentile the highest any of them saw. */
  readonly measured: SideMeasurement;
  /** Requests sent by all of them, warm-up included. */
  readonly sent: number;
  /** Each process's CPU as a share of one core. */
  readonly cpuShares: readonly number[];
}

/**
 * `send` at `load` from this process's own thread, with the requests it sent (warm-up included) and this process's
 * CPU meanwhile as a share of one core: what each load process reports, and the load when there are none.
 */
export async function measureHere(load: LoadProcessRequest, send: RequestSender): Promise<{ measured: SideMeasurement; sent: number; cpuShare: number }> {
  let sent = 0;
  const counted: RequestSender = () => {
    sent++;
    return send();
  };
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  const measured = await measureThroughput(counted, load);
  const cpu = process.cpuUsage(cpuBefore);
  const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1000;
  return { measured, sent, cpuShare: (cpu.user + cpu.system) / wallUs };
}

/** Where a side's load comes from: load processes, or this process's own thread sending requests. */
export type LoadSource = LoadProcesses | RequestSender;

/**
 * The server side's load at `load` from `source`. With `counting`, the server's main-thread CPU per request is
 * recorded under its label.
 */
export function measureServerLoad(
  load: LoadProcessRequest, source: LoadSource,
  counting?: { readonly serverCpu: MainThreadCpuPerRequest; readonly label: string },
): Promise<SpreadMeasurement> {
  const measure = source instanceof LoadProcesses
    ? () => source.measure(load)
    : async (): Promise<SpreadMeasurement> => {
      const { measured, sent, cpuShare } = await measureHere(load, source);
      return { measured, sent, cpuShares: [cpuShare] };
    };
  return counting === undefined ? measure() : counting.serverCpu.measureCounted(counting.label, measure);
}

/** One load-generating child process, whichever way the bench speaks to it. */
export interface LoadChild {
  /** Its next message: `ready` once after it started, then one `measured` per {@link send}. Rejects on `failed` or exit. */
  next(): Promise<Exclude<LoadProcessMessage, { type: "failed" }>>;
  send(request: LoadProcessRequest): void;
  stop(): Promise<void>;
}

/** A Node load process (bench/load-process.ts) over Node IPC. */
function nodeLoadChild(settings: LoadProcessSettings): LoadChild {
  const child: ChildProcess = fork(path.join(__dirname, "load-process.js"), [JSON.stringify(settings)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return {
    next: () => nextChildMessage<LoadProcessMessage>(child, "load process"),
    send: (request) => child.send(request),
    stop: () => stopChild(child),
  };
}

/**
 * Several load-generating child processes that measure at once, the concurrency split between them: the load at
 * GPU rates without one JS thread as the limit (bench/load-process.ts), or from gRPC's C core (bench/grpcio-load.ts).
 */
export class LoadProcesses {
  private constructor(private readonly children: readonly LoadChild[]) {}

  static start(settings: LoadProcessSettings, count: number): Promise<LoadProcesses> {
    return LoadProcesses.of(Array.from({ length: count }, () => nodeLoadChild(settings)));
  }

  /** Once every child said it is ready; stops them all when one fails to. */
  static async of(children: readonly LoadChild[]): Promise<LoadProcesses> {
    const processes = new LoadProcesses(children);
    try {
      await Promise.all(children.map((child) => child.next()));
    } catch (error) {
      await processes.stop();
      throw error;
    }
    return processes;
  }

  /** How many processes share the load. */
  get size(): number {
    return this.children.length;
  }

  /** Every process measures the same window; `concurrency` in all, spread as evenly as it divides. */
  async measure(request: LoadProcessRequest): Promise<SpreadMeasurement> {
    const count = this.children.length;
    const replies = this.children.map((child, i) => {
      const reply = child.next();
      const share = Math.floor(request.concurrency / count) + (i < request.concurrency % count ? 1 : 0);
      child.send({ ...request, concurrency: Math.max(1, share) });
      return reply;
    });
    const measured = (await Promise.all(replies)).map((message) => {
      if (message.type !== "measured") throw new Error(`unexpected message from a load process: ${message.type}`);
      return message;
    });
    const highest = (pick: (m: SideMeasurement) => number): number => Math.max(...measured.map((m) => pick(m.measured)));
    return {
      measured: {
        throughput: measured.reduce((sum, m) => sum + m.measured.throughput, 0),
        p50Ms: highest((m) => m.p50Ms), p90Ms: highest((m) => m.p90Ms), p99Ms: highest((m) => m.p99Ms),
      },
      sent: measured.reduce((sum, m) => sum + m.sent, 0),
      cpuShares: measured.map((m) => m.cpuShare),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map((child) => child.stop()));
  }
}

/**
 * Load processes per protocol (`urls`: http://... and grpc://...) sending `request`, when `count` is more than 1;
 * none when it is 1, and the caller's own thread sends. Stop them with {@link stopSpreadLoads}.
 */
export async function startSpreadLoads<Protocol extends string>(
  urls: Readonly<Record<Protocol, string>>, request: Omit<LoadProcessSettings, "url">, count: number,
): Promise<Map<Protocol, LoadProcesses>> {
  const spread = new Map<Protocol, LoadProcesses>();
  if (count <= 1) return spread;
  try {
    for (const [protocol, url] of Object.entries(urls) as [Protocol, string][]) spread.set(protocol, await LoadProcesses.start({ ...request, url }, count));
  } catch (error) {
    await stopSpreadLoads(spread);
    throw error;
  }
  return spread;
}

/** Stops the load processes among `sources` (a thread's own senders need no stopping). */
export async function stopSpreadLoads(sources: ReadonlyMap<string, LoadSource>): Promise<void> {
  await Promise.all([...sources.values()].map((source) => source instanceof LoadProcesses ? source.stop() : undefined));
}
