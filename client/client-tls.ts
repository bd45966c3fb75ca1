/**
 * TLS settings of a client, for `https://` and `grpcs://` servers. PEM text or bytes; without `ca` the system's
 * trusted CAs are used.
 */
export interface ClientTls {
  /** CA certificates to trust (a private CA, or the server's self-signed certificate). */
  readonly ca?: string | Buffer;
  /** Client certificate (chain), for servers that require mutual TLS (`--*-use-ssl-mutual`). */
  readonly cert?: string | Buffer;
  /** Private key of `cert`. */
  readonly key?: string | Buffer;
  /** Check the server's certificate against the CAs (default true). perf_analyzer's `--ssl-https-verify-peer`. */
  readonly verifyPeer?: boolean;
  /** Check that the certificate names the host connected to (default true). perf_analyzer's `--ssl-https-verify-host`. */
  readonly verifyHost?: boolean;
}

/** As Node's TLS options: the same settings for undici (HTTPS) and grpc-js (gRPC over TLS). */
export function nodeTlsOptions(tls: ClientTls | undefined): {
  ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; rejectUnauthorized: boolean; checkServerIdentity?: () => undefined;
} {
  return {
    ...(tls?.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls?.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls?.key === undefined ? {} : { key: tls.key }),
    rejectUnauthorized: tls?.verifyPeer ?? true,
    ...(tls?.verifyHost === false ? { checkServerIdentity: () => undefined } : {}),
  };
}
