import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import type { onRequestHookHandler } from "fastify";
import { sendError } from "./error-reply";

/**
 * What a browser's `Sec-Fetch-Site` says of a request another site's page made ("same-site" is another origin of
 * the same registrable domain, still not this server).
 */
const FOREIGN_FETCH_SITES = new Set(["cross-site", "same-site"]);

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
 * Refuses (403) state-changing requests a web page on another site could make: to a host name this server was not
 * told is its own (DNS rebinding, where another site's name resolves to this server and its page passes as
 * same-origin), from a foreign `Origin`, or one the browser itself marks as another site's (`Sec-Fetch-Site`).
 * Browsers send `Origin` with every cross-origin request and every POST, so a form or `no-cors` fetch from
 * another site is refused whatever its Content-Type; clients that are no browser (curl, tritonclient, libcurl's
 * form-encoded default) send neither header and pass. IP literals and `localhost` (and `*.localhost`, which
 * browsers keep on loopback) are always this server's names; others only when listed (--http-allowed-host), `*`
 * turning the host check off. The server sends no CORS headers, so browsers never let other sites read its
 * answers; this keeps them from changing it.
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
    const site = headers["sec-fetch-site"];
    if (typeof site === "string" && FOREIGN_FETCH_SITES.has(site.toLowerCase())) {
      return { status: 403, message: `cross-site request refused: the browser marks it 'Sec-Fetch-Site: ${site.slice(0, 32)}', and this server allows no cross-site changes` };
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
