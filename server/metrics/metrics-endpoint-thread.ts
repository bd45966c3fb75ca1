import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import { type EndpointMessage, type ExpositionMessage, type MainMessage, METRICS_PATH, type MetricsEndpointData } from "./metrics-endpoint-messages";

/*
 * The metrics endpoint's HTTP server, in a worker thread of its own (see `startMetricsServer`): scrapes are parsed
 * and answered here; the main thread only builds the exposition text when asked.
 */

function post(message: EndpointMessage): void {
  parentPort!.postMessage(message);
}

const { host, port, contentType } = workerData as MetricsEndpointData;
const pending = new Map<number, (answer: ExpositionMessage) => void>();
let nextId = 0;

function exposition(): Promise<ExpositionMessage> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    post({ kind: "scrape", id });
  });
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path !== METRICS_PATH) {
    response.writeHead(404, { "content-type": "text/plain" }).end("Not Found\n");
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { "content-type": "text/plain", allow: "GET, HEAD" }).end("Method Not Allowed\n");
    return;
  }
  const answer = await exposition();
  if (answer.kind === "exposition-failed") {
    response.writeHead(500, { "content-type": "text/plain" }).end(`${answer.message}\n`);
    return;
  }
  response.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(answer.text) });
  response.end(request.method === "HEAD" ? undefined : answer.text);
}

const server = createServer((request, response) => void handle(request, response));
server.once("error", (error: NodeJS.ErrnoException) => post({ kind: "listen-failed", message: error.message, code: error.code }));
server.listen(port, host, () => {
  const bound = server.address() as AddressInfo;
  post({ kind: "listening", address: bound.address, port: bound.port });
});

parentPort!.on("message", (message: MainMessage) => {
  if (message.kind === "close") {
    server.close(() => post({ kind: "closed" }));
    server.closeIdleConnections();
    return;
  }
  const answered = pending.get(message.id);
  pending.delete(message.id);
  answered?.(message);
});
