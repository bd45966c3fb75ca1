/** PEM material of a TLS endpoint (HTTPS or gRPC over TLS), read at start-up. */
export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** CA certificates that client certificates must chain to; used when `mutual`. */
  readonly rootCert: Buffer | undefined;
  /** Require and verify a client certificate (mutual TLS). */
  readonly mutual: boolean;
}
