import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import type { LogSettings } from "../../logging/log-settings";
import type { ServerTls } from "../server-tls";
import { clientErrorHandler } from "./client-error-handler";

/** How long the endpoint waits on a client, and how many clients it holds at once. 0 turns a timeout off. */
export interface HttpConnectionLimits {
  /** A request's headers must arrive within this (Node's headersTimeout); else 408. */
  readonly headerTimeoutMs: number;
  /** The whole request, body included, must arrive within this (Node's requestTimeout); else 408. */
  readonly requestTimeoutMs: number;
  /** Longest silence of a client that owes (part of) a request, or its first byte; the connection is closed. */
  readonly idleTimeoutMs: number;
  /** Longest time a client takes nothing of its response; the connection is closed. */
  readonly writeTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  readonly keepAliveTimeoutMs: number;
  /** Most connections open at once; more are closed as they are accepted. 0 = no limit. */
  readonly maxConnections: number;
}

/** What the listener itself is made of, before any route. */
export interface HttpListenerOptions {
  /** Triton's --http-max-input-size: largest request body, before and after decompression. */
  readonly maxInputBytes: number;
  readonly limits: HttpConnectionLimits;
  /** Serve HTTPS instead of HTTP (--http-use-ssl and friends). */
  readonly tls?: ServerTls;
  /** The root logger and its settings, which `/v2/logging` reads and changes. */
  readonly logSettings: LogSettings;
}

/**
 * The fastify instance, not yet routed: Node's header and request deadlines, the idle and keep-alive timeouts,
 * the connection cap, HTTPS when asked, Triton's answers to requests Node cannot read, and its verbose request
 * line.
 */
export function createFastify({ maxInputBytes, limits, tls, logSettings }: HttpListenerOptions): FastifyInstance {
  const logger: FastifyBaseLogger = logSettings.logger;
  // Node checks header and request deadlines on a timer; check often enough that they are kept within ~10%.
  const deadlines = [limits.headerTimeoutMs, limits.requestTimeoutMs].filter((ms) => ms > 0);
  const nodeServerOptions = {
    headersTimeout: limits.headerTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(Math.min(...deadlines, 10_000) / 10))),
  };
  // Triton's --log-verbose 1 line for every request (never its headers: they may carry a restricted API's value),
  // checked per request as the verbose level may change at run time (/v2/logging). Written where fastify makes
  // the request's logger, not in a global onRequest hook: with one, clients that never read their large
  // responses were not cut off at the write timeout under load (tests/e2e/large-json.test.ts).
  const childLoggerFactory: NonNullable<FastifyServerOptions["childLoggerFactory"]> = (parent, bindings, childOptions, raw) => {
    const child = parent.child(bindings, childOptions);
    if (logSettings.verbose) child.debug(`HTTP request: ${raw.method} ${raw.url}`);
    return child;
  };
  // Shared by the HTTP and the HTTPS server, whose types differ: typed by each call to Fastify() below.
  const options = {
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory,
    bodyLimit: maxInputBytes,
    // Inference bodies can be large; 'Expect: 100-continue' clients get their continue from Node.
    return503OnClosing: true,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    clientErrorHandler: clientErrorHandler(
      `headers within ${limits.headerTimeoutMs} ms (--http-header-timeout-ms), the whole request within ${limits.requestTimeoutMs} ms (--http-request-timeout-ms)`,
    ),
  };
  const app = tls === undefined
    ? Fastify({ ...options, http: nodeServerOptions })
    : Fastify({
      ...options,
      https: {
        ...nodeServerOptions, cert: tls.cert, key: tls.key, ca: tls.rootCert, requestCert: tls.mutual, rejectUnauthorized: tls.mutual,
        // The HTTP timeouts start once TLS is up; a client that never completes its handshake is its own case.
        handshakeTimeout: limits.idleTimeoutMs > 0 ? limits.idleTimeoutMs : 120_000,
      },
    });
  app.server.maxConnections = limits.maxConnections;
  app.server.on("drop", () => logger.debug(`connection refused: ${limits.maxConnections} connections are open (--http-max-connections)`));
  return app;
}
