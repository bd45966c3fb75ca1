import { type Command, InvalidArgumentError, type OptionValues } from "@commander-js/extra-typings";
import type { ApiRestrictions } from "../frontends/api-restrictions";
import type { GrpcConnectionLimits } from "../frontends/grpc/grpc-server";
import type { HttpConnectionLimits } from "../frontends/http/http-server";
import { booleanFlag, collect, parseInteger } from "../../common/option-parsers";
import { parseApiRestrictions, type SecretSources } from "./restricted-api-option";
import type { ServerTls } from "../frontends/server-tls";
import { parseServerTls } from "./tls-option";
import type { serverFlags } from "./server-flags";

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

/**
 * The TLS flags of one endpoint. The prefix is a type parameter so that each flag's name (`--http-use-ssl` ->
 * `httpUseSsl`) reaches the command's inferred option types.
 */
function tlsFlags<Opts extends OptionValues, const Prefix extends "http" | "grpc">(command: Command<[], Opts>, prefix: Prefix, what: string) {
  return command
    .addOption(booleanFlag(`--${prefix}-use-ssl`, `serve ${what} over TLS (needs --${prefix}-server-cert and --${prefix}-server-key)`, false))
    .addOption(booleanFlag(`--${prefix}-use-ssl-mutual`, `TLS that also requires a client certificate signed by --${prefix}-root-cert`, false))
    .option(`--${prefix}-server-cert <file>`, `PEM certificate (chain) of the ${what} endpoint`)
    .option(`--${prefix}-server-key <file>`, `PEM private key of --${prefix}-server-cert`)
    .option(`--${prefix}-root-cert <file>`, "PEM CA certificates that client certificates must chain to (mutual TLS)");
}

/**
 * Adds the TLS, restricted-API, timeout and connection-limit flags of both endpoints to the server's command. It
 * takes that command's concrete type rather than any command's: the option types inferred through a chain over a
 * generic command are printed into the .d.ts expanded, exponentially in the number of flags (tsc ran for minutes).
 */
export function addNetworkOptions(command: ReturnType<typeof serverFlags>) {
  return tlsFlags(tlsFlags(command, "http", "HTTP"), "grpc", "gRPC")
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

/** The option values of a command with {@link addNetworkOptions}' flags, as commander parses them. */
type NetworkOptionValues = ReturnType<ReturnType<typeof addNetworkOptions>["opts"]>;

/** Reads the flags added by {@link addNetworkOptions}; files and secrets are read here, at start-up. */
export function parseNetworkOptions(o: NetworkOptionValues, sources?: SecretSources): NetworkOptions {
  const httpLimits: HttpConnectionLimits = {
    headerTimeoutMs: o.httpHeaderTimeoutMs,
    requestTimeoutMs: o.httpRequestTimeoutMs,
    idleTimeoutMs: o.httpIdleTimeoutMs,
    writeTimeoutMs: o.httpWriteTimeoutMs,
    keepAliveTimeoutMs: o.httpKeepaliveTimeoutMs,
    maxConnections: o.httpMaxConnections,
  };
  if (httpLimits.headerTimeoutMs > 0 && httpLimits.requestTimeoutMs > 0 && httpLimits.headerTimeoutMs > httpLimits.requestTimeoutMs) {
    throw new InvalidArgumentError("--http-header-timeout-ms must not exceed --http-request-timeout-ms (headers are part of the request)");
  }
  return {
    httpRestrictedApis: parseApiRestrictions("--http-restricted-api", o.httpRestrictedApi, sources),
    httpAllowedHosts: o.httpAllowedHost,
    grpcRestrictedProtocols: parseApiRestrictions("--grpc-restricted-protocol", o.grpcRestrictedProtocol, sources),
    httpTls: parseServerTls("--http", {
      useSsl: o.httpUseSsl, useSslMutual: o.httpUseSslMutual, serverCert: o.httpServerCert, serverKey: o.httpServerKey, rootCert: o.httpRootCert,
    }),
    grpcTls: parseServerTls("--grpc", {
      useSsl: o.grpcUseSsl, useSslMutual: o.grpcUseSslMutual, serverCert: o.grpcServerCert, serverKey: o.grpcServerKey, rootCert: o.grpcRootCert,
    }),
    httpLimits,
    grpcLimits: {
      keepaliveTimeMs: o.grpcKeepaliveTime,
      keepaliveTimeoutMs: o.grpcKeepaliveTimeout,
      maxConnectionIdleMs: o.grpcMaxConnectionIdle,
      maxConnectionAgeMs: o.grpcMaxConnectionAge,
      maxConnectionAgeGraceMs: o.grpcMaxConnectionAgeGrace,
      maxConcurrentStreams: o.grpcMaxConcurrentStreams,
      requestTimeoutMs: o.grpcRequestTimeoutMs,
      writeTimeoutMs: o.grpcWriteTimeoutMs,
      maxConnections: o.grpcMaxConnections,
    },
  };
}
