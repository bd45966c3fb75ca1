import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { workerScript } from "../../common/worker-script";
import type { EndpointMessage, MainMessage, MetricsEndpointData } from "./metrics-endpoint-messages";

export { METRICS_PATH } from "./metrics-endpoint-messages";

/** What the endpoint serves: {@link ServerMetrics} fits. */
export interface MetricsSource {
  readonly contentType: string;
  exposition(): Promise<string>;
}

/** A listening metrics endpoint. */
export interface MetricsServer {
  readonly address: string;
  /** The bound port (the chosen one when asked for port 0). */
  readonly port: number;
  /** Stops listening, closes idle keep-alive connections (Prometheus holds one open) and ends the endpoint's thread. */
  close(): Promise<void>;
}

/** Where the endpoint listens (`--metrics-address`, `--metrics-port`). */
export interface MetricsListenOptions {
  readonly host: string;
  readonly port: number;
  /** Told when the endpoint's thread fails after it started listening (scrapes then fail to connect); the server goes on. */
  readonly onThreadError?: (error: Error) => void;
}

/**
 * Serves `GET /metrics` apart from the inference endpoints, so that scrapes never queue behind inference traffic
 * and the port can be firewalled separately (Triton's :8002), and from a worker thread of its own: HTTP parsing and
 * responses for scrapes run in another V8 isolate. In the main thread, the first scrape of a server under load
 * deoptimized ~60 of Node's HTTP and stream functions that the inference endpoints run hot (a second kind of
 * request and response makes their type feedback polymorphic), which cost every later inference request 5-8% of
 * throughput (issue 29, measured with `--trace-deopt` and the `metrics` bench); the main thread now only builds
 * the exposition text when the endpoint's thread asks for it.
 */
export async function startMetricsServer(source: MetricsSource, listen: MetricsListenOptions): Promise<MetricsServer> {
  const { file, execArgv } = workerScript(__dirname, "metrics-endpoint-thread");
  const data: MetricsEndpointData = { host: listen.host, port: listen.port, contentType: source.contentType };
  const worker = new Worker(file, { execArgv, workerData: data });
  const send = (message: MainMessage): void => worker.postMessage(message);
  const answer = (id: number): void => {
    source.exposition().then(
      (text) => send({ kind: "exposition", id, text }),
      (error: unknown) => send({ kind: "exposition-failed", id, message: error instanceof Error ? error.message : String(error) }),
    );
  };
  let starting: { resolve(bound: { address: string; port: number }): void; reject(error: Error): void } | undefined;
  let closed: (() => void) | undefined;
  worker.on("message", (message: EndpointMessage) => {
    if (message.kind === "scrape") answer(message.id);
    else if (message.kind === "closed") closed?.();
    else if (message.kind === "listening") starting?.resolve(message);
    else starting?.reject(Object.assign(new Error(message.message), { code: message.code }));
  });
  // A listener always: an 'error' event nobody listens to would end the whole server.
  worker.on("error", (error: Error) => (starting === undefined ? listen.onThreadError?.(error) : starting.reject(error)));
  worker.once("exit", () => starting?.reject(new Error("the metrics endpoint's thread ended before listening")));
  let first: { address: string; port: number };
  try {
    first = await new Promise((resolve, reject) => (starting = { resolve, reject }));
  } catch (error) {
    await worker.terminate();
    throw error;
  } finally {
    starting = undefined;
  }
  return {
    address: first.address,
    port: first.port,
    async close() {
      const done = new Promise<void>((resolve) => (closed = resolve));
      send({ kind: "close" });
      await Promise.race([done, once(worker, "exit")]);
      await worker.terminate();
    },
  };
}
