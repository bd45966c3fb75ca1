import { type Command, InvalidArgumentError } from "commander";
import type { ApiRestrictions } from "../frontends/api-restrictions";
import type { GrpcConnectionLimits } from "../frontends/grpc/grpc-server";
import type { HttpConnectionLimits } from "../frontends/http/http-server";
import { booleanFlag, collect, parseInteger } from "../../common/option-parsers";
import { parseApiRestrictions, type SecretSources } from "./restricted-api-option";
import type { ServerTls } from "../frontends/server-tls";
import { parseServerTls } from "./tls-option";

/** Who may call what, over which encryption, and how long and how many clients are waited for: per endpoint. */
export interface NetworkOptions {
  readonly httpRestrictedApis: ApiRestrictions;
  /** Host names, besides IP literals and localhost, under which HTTP clients may change the server. */
  readonly httpAllowedHosts: readonly string[];
  readonly grpcRestrictedProtocols: ApiRestrictions;
  readonly httpTls: ServerTls | undefined;
  readonly grpcTls: ServerTls | undefined;
  readonly httpLimits: HttpConnectionLimits;
  readonly grpcLimits: GrpcConnectionLimits;
}

/**
 * Behind Google Cloud's Application Load Balancers the backend keep-alive must outlast the load balancer's fixed
 * 600 s, or it may reuse a connection the server is closing and answer the client 502.
 */
const DEFAULT_HTTP_KEEPALIVE_TIMEOUT_MS = 620_000;

const milliseconds = parseInteger(0, 2 ** 31 - 1);

/** One --http-allowed-host: a DNS name as a Host header carries it (no scheme, no port), or `*`. */
function collectHostName(value: string, previous: string[] = []): string[] {
  if (value !== "*" && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(value)) {
    throw new InvalidArgumentError(`--http-allowed-host '${value}' is not a host name (no scheme, no port) or '*'`);
  }
  return [...previous, value];
}

function tlsFlags(command: Command, prefix: "http" | "grpc", what: string): Command {
  return command
    .addOption(booleanFlag(`--${prefix}-use-ssl`, `serve ${what} over TLS (needs --${prefix}-server-cert and --${prefix}-server-key)`, false))
    .addOption(booleanFlag(`--${prefix}-use-ssl-mutual`, `TLS that also requires a client certificate signed by --${prefix}-root-cert`, false))
    .option(`--${prefix}-server-cert <file>`, `PEM certificate (chain) of the ${what} endpoint`)
    .option(`--${prefix}-server-key <file>`, `PEM private key of --${prefix}-server-cert`)
    .option(`--${prefix}-root-cert <file>`, "PEM CA certificates that client certificates must chain to (mutual TLS)");
}

/** Adds the TLS, restricted-API, timeout and connection-limit flags of both endpoints. */
export function addNetworkOptions(command: Command): Command {
  tlsFlags(command, "http", "HTTP");
  tlsFlags(command, "grpc", "gRPC");
  return command
    .option("--http-restricted-api <groups:header=value>", "require header=value on these API groups (value may be env:NAME or file:PATH); repeatable", collect, [])
    .option("--http-allowed-host <name>", "a host name (Host header, without port) under which HTTP clients may change the server (repository, logging, trace, shared memory); IP addresses and localhost always may; '*' allows any name (no DNS-rebinding check); repeatable", collectHostName, [])
    .option("--grpc-restricted-protocol <groups:key=value>", "require metadata triton-grpc-protocol-<key>=value on these API groups (value may be env:NAME or file:PATH); repeatable", collect, [])
    .option("--http-header-timeout-ms <ms>", "a request's headers must arrive within this (0 = no limit)", milliseconds, 10_000)
    .option("--http-request-timeout-ms <ms>", "a whole request, body included, must arrive within this, else 408 (0 = no limit)", milliseconds, 60_000)
    .option("--http-idle-timeout-ms <ms>", "close a connection whose client sends nothing for this long while a request is due (0 = never)", milliseconds, 5_000)
    .option("--http-write-timeout-ms <ms>", "close a connection whose client reads nothing of its response for this long (0 = never)", milliseconds, 10_000)
    .option("--http-keepalive-timeout-ms <ms>", "close a keep-alive connection after this long without a request", parseInteger(1, 2 ** 31 - 1), DEFAULT_HTTP_KEEPALIVE_TIMEOUT_MS)
    .option("--http-max-connections <n>", "most HTTP connections open at once; more are closed on accept (0 = no limit)", parseInteger(0), 4096)
    .option("--grpc-keepalive-time <ms>", "ping a gRPC connection after this long without activity", parseInteger(1, 2 ** 31 - 1), 7_200_000)
    .option("--grpc-keepalive-timeout <ms>", "close a gRPC connection whose ping is not answered within this", parseInteger(1, 2 ** 31 - 1), 20_000)
    .option("--grpc-max-connection-idle <ms>", "close (GOAWAY) a gRPC connection without calls for this long (0 = never)", milliseconds, 300_000)
    .option("--grpc-max-connection-age <ms>", "close (GOAWAY) every gRPC connection after this long (0 = never)", milliseconds, 0)
    .option("--grpc-max-connection-age-grace <ms>", "after --grpc-max-connection-age, time for calls in flight before the connection is cut (0 = unlimited)", milliseconds, 0)
    .option("--grpc-max-concurrent-streams <n>", "most concurrent calls per gRPC connection", parseInteger(1, 2 ** 31 - 1), 1000)
    .option("--grpc-request-timeout-ms <ms>", "a gRPC call's request (each message of a stream) and a TLS handshake must arrive within this, else DEADLINE_EXCEEDED / reset (0 = no limit)", milliseconds, 60_000)
    .option("--grpc-write-timeout-ms <ms>", "reset a gRPC call whose client takes nothing of its response for this long (0 = never)", milliseconds, 10_000)
    .option("--grpc-max-connections <n>", "most gRPC connections open at once; more are closed on accept (0 = no limit)", parseInteger(0), 4096);
}

/** Reads the flags added by {@link addNetworkOptions}; files and secrets are read here, at start-up. */
export function parseNetworkOptions(o: Readonly<Record<string, unknown>>, sources?: SecretSources): NetworkOptions {
  const int = (key: string): number => o[key] as number;
  const httpLimits: HttpConnectionLimits = {
    headerTimeoutMs: int("httpHeaderTimeoutMs"),
    requestTimeoutMs: int("httpRequestTimeoutMs"),
    idleTimeoutMs: int("httpIdleTimeoutMs"),
    writeTimeoutMs: int("httpWriteTimeoutMs"),
    keepAliveTimeoutMs: int("httpKeepaliveTimeoutMs"),
    maxConnections: int("httpMaxConnections"),
  };
  if (httpLimits.headerTimeoutMs > 0 && httpLimits.requestTimeoutMs > 0 && httpLimits.headerTimeoutMs > httpLimits.requestTimeoutMs) {
    throw new InvalidArgumentError("--http-header-timeout-ms must not exceed --http-request-timeout-ms (headers are part of the request)");
  }
  const tls = (prefix: "http" | "grpc"): ServerTls | undefined => parseServerTls(`--${prefix}`, {
    useSsl: o[`${prefix}UseSsl`] as boolean,
    useSslMutual: o[`${prefix}UseSslMutual`] as boolean,
    serverCert: o[`${prefix}ServerCert`] as string | undefined,
    serverKey: o[`${prefix}ServerKey`] as string | undefined,
    rootCert: o[`${prefix}RootCert`] as string | undefined,
  });
  return {
    httpRestrictedApis: parseApiRestrictions("--http-restricted-api", o["httpRestrictedApi"] as string[], sources),
    httpAllowedHosts: o["httpAllowedHost"] as string[],
    grpcRestrictedProtocols: parseApiRestrictions("--grpc-restricted-protocol", o["grpcRestrictedProtocol"] as string[], sources),
    httpTls: tls("http"),
    grpcTls: tls("grpc"),
    httpLimits,
    grpcLimits: {
      keepaliveTimeMs: int("grpcKeepaliveTime"),
      keepaliveTimeoutMs: int("grpcKeepaliveTimeout"),
      maxConnectionIdleMs: int("grpcMaxConnectionIdle"),
      maxConnectionAgeMs: int("grpcMaxConnectionAge"),
      maxConnectionAgeGraceMs: int("grpcMaxConnectionAgeGrace"),
      maxConcurrentStreams: int("grpcMaxConcurrentStreams"),
      requestTimeoutMs: int("grpcRequestTimeoutMs"),
      writeTimeoutMs: int("grpcWriteTimeoutMs"),
      maxConnections: int("grpcMaxConnections"),
    },
  };
}
