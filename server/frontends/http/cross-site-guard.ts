import type { IncomingHttpHeaders } from "node:http";

/**
 * Content types a browser sends to another site without a CORS preflight (HTML forms, `no-cors` fetch). The
 * Triton clients send none (tritonclient.http) or application/octet-stream (tritonclient.http.aio), which a
 * browser can only send cross-site after a preflight this server never approves.
 */
const CROSS_SITE_CONTENT_TYPES = new Set(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]);

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

/**
 * Why a state-changing request (model load/unload) must be refused as possibly cross-site, or undefined: a
 * foreign `Origin` (403), or a body type a page on another site could send without asking (415). The server
 * sends no CORS headers, so browsers never let other sites read its answers; this keeps them from changing it.
 */
export function crossSiteRefusal(headers: IncomingHttpHeaders): { readonly status: number; readonly message: string } | undefined {
  const origin = headers.origin;
  if (origin !== undefined && !isSameOrigin(origin, headers.host)) {
    return {
      status: 403,
      message: `cross-origin request refused: Origin '${origin}' is not this server's origin (Host '${headers.host ?? ""}'), and this server allows no cross-origin model repository changes`,
    };
  }
  const type = headers["content-type"]?.split(";")[0]!.trim().toLowerCase();
  if (type !== undefined && CROSS_SITE_CONTENT_TYPES.has(type)) {
    return {
      status: 415,
      message: `Content-Type '${type}' is not accepted for model repository changes (a web page on another site could send it): send application/json, or no Content-Type`,
    };
  }
  return undefined;
}
