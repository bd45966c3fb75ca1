import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import type { onRequestHookHandler } from "fastify";
import { sendError } from "./error-reply";

/**
 * Content types a browser sends to another site without a CORS preflight (HTML forms, `no-cors` fetch). The
 * Triton clients send none (tritonclient.http) or application/octet-stream (tritonclient.http.aio), which a
 * browser can only send cross-site after a preflight this server never approves.
 */
const CROSS_SITE_CONTENT_TYPES = new Set(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]);

/** Why a request is refused: its HTTP status and Triton's error message. */
export interface CrossSiteRefusal {
  readonly status: number;
  readonly message: string;
}

function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const from = new URL(origin);
    // Parse Host with the Origin's scheme, so a default port is elided on both sides alike.
    return from.host === new URL(`${from.protocol}//${host}`).host;
  } catch {
    return false; // "null" (sandboxed frames, file pages) and anything else that is no URL
  }
}

/** The name in a Host header, lower case and without its port or an IPv6 literal's brackets; undefined if none. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Refuses state-changing requests a web page on another site could make: from a foreign `Origin` (403), with a
 * body type such a page sends without asking (415), or to a host name this server was not told is its own
 * (403: DNS rebinding, where another site's name resolves to this server and its page passes as same-origin).
 * IP literals and `localhost` (and `*.localhost`, which browsers keep on loopback) are always this server's;
 * other names only when listed (--http-allowed-host), `*` turning the host check off. The server sends no CORS
 * headers, so browsers never let other sites read its answers; this keeps them from changing it.
 */
export class CrossSiteGuard {
  readonly #anyHost: boolean;
  readonly #hosts: ReadonlySet<string>;

  constructor(allowedHosts: readonly string[]) {
    this.#anyHost = allowedHosts.includes("*");
    this.#hosts = new Set(allowedHosts.map((host) => host.toLowerCase()));
  }

  /** Why this request must be refused as possibly sent by a browser for another site, or undefined. */
  refusal(headers: IncomingHttpHeaders): CrossSiteRefusal | undefined {
    const host = headers.host;
    if (host !== undefined && !this.#isOwnHost(host)) {
      return {
        status: 403,
        message: `request refused: Host '${host.slice(0, 256)}' is not a name of this server (allowed: IP addresses, localhost, and --http-allowed-host), and this API changes the server`,
      };
    }
    const origin = headers.origin;
    if (origin !== undefined && !isSameOrigin(origin, host)) {
      return {
        status: 403,
        message: `cross-origin request refused: Origin '${origin.slice(0, 256)}' is not this server's origin (Host '${(host ?? "").slice(0, 256)}'), and this server allows no cross-origin changes`,
      };
    }
    const type = headers["content-type"]?.split(";")[0]!.trim().toLowerCase();
    if (type !== undefined && CROSS_SITE_CONTENT_TYPES.has(type)) {
      return {
        status: 415,
        message: `Content-Type '${type}' is not accepted for requests that change the server (a web page on another site could send it): send application/json, or no Content-Type`,
      };
    }
    return undefined;
  }

  /** An onRequest hook for routes that change the server (a GET on a read/write route passes). */
  readonly hook: onRequestHookHandler = (request, reply, done) => {
    const refusal = request.method === "GET" ? undefined : this.refusal(request.headers);
    if (refusal === undefined) done();
    else void sendError(reply, refusal.status, refusal.message);
  };

  #isOwnHost(host: string): boolean {
    if (this.#anyHost) return true;
    const name = hostnameOf(host);
    if (name === undefined) return false;
    return isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost") || this.#hosts.has(name);
  }
}
