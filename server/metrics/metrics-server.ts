import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
  /** Stops listening and closes idle keep-alive connections (Prometheus holds one open). */
  close(): Promise<void>;
}

/** Where the endpoint listens (`--metrics-address`, `--metrics-port`). */
export interface MetricsListenOptions {
  readonly host: string;
  readonly port: number;
}

export const METRICS_PATH = "/metrics";

async function handle(source: MetricsSource, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path !== METRICS_PATH) {
    response.writeHead(404, { "content-type": "text/plain" }).end("Not Found\n");
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { "content-type": "text/plain", allow: "GET, HEAD" }).end("Method Not Allowed\n");
    return;
  }
  try {
    const body = await source.exposition();
    response.writeHead(200, { "content-type": source.contentType, "content-length": Buffer.byteLength(body) });
    response.end(request.method === "HEAD" ? undefined : body);
  } catch (error) {
    response.writeHead(500, { "content-type": "text/plain" }).end(`${(error as Error).message}\n`);
  }
}

/**
 * Serves `GET /metrics` on its own small node:http server, apart from the inference endpoints so that scrapes
 * never queue behind inference traffic and the port can be firewalled separately (Triton's :8002).
 */
export function startMetricsServer(source: MetricsSource, listen: MetricsListenOptions): Promise<MetricsServer> {
  const server = createServer((request, response) => void handle(source, request, response));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      const { address, port } = server.address() as AddressInfo;
      resolve({
        address,
        port,
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          server.closeIdleConnections();
        }),
      });
    });
  });
}
