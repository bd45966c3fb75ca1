import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { InvalidArgumentError } from "@commander-js/extra-typings";
import type { ServerTls } from "../frontends/server-tls";

/** The flags of one endpoint, as parsed: `--<prefix>-use-ssl`, `-server-cert`, `-server-key`, `-root-cert`, `-use-ssl-mutual`. */
export interface TlsFlags {
  readonly useSsl: boolean;
  readonly useSslMutual: boolean;
  readonly serverCert: string | undefined;
  readonly serverKey: string | undefined;
  readonly rootCert: string | undefined;
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new InvalidArgumentError(`${flag}: cannot read '${path}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/**
 * Triton's gRPC TLS flags, and their HTTP twins: TLS is on with `use-ssl` (or `use-ssl-mutual`, which also asks
 * every client for a certificate signed by `root-cert`). Files are read and checked here, so a missing file or a
 * key that does not match its certificate stops the server at start-up with the flag's name.
 */
export function parseServerTls(prefix: "--grpc" | "--http", flags: TlsFlags): ServerTls | undefined {
  if (!flags.useSsl && !flags.useSslMutual) return undefined;
  if (flags.serverCert === undefined || flags.serverKey === undefined) {
    throw new InvalidArgumentError(`${prefix}-use-ssl needs ${prefix}-server-cert and ${prefix}-server-key`);
  }
  if (flags.useSslMutual && flags.rootCert === undefined) {
    throw new InvalidArgumentError(`${prefix}-use-ssl-mutual needs ${prefix}-root-cert, the CA that client certificates must chain to`);
  }
  const tls: ServerTls = {
    cert: readPem(`${prefix}-server-cert`, flags.serverCert),
    key: readPem(`${prefix}-server-key`, flags.serverKey),
    rootCert: flags.rootCert === undefined ? undefined : readPem(`${prefix}-root-cert`, flags.rootCert),
    mutual: flags.useSslMutual,
  };
  try {
    createSecureContext({ cert: tls.cert, key: tls.key, ca: tls.rootCert });
  } catch (error) {
    throw new InvalidArgumentError(`${prefix}-server-cert / ${prefix}-server-key / ${prefix}-root-cert: ${(error as Error).message}`);
  }
  return tls;
}
