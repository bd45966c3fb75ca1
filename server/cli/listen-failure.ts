/** One endpoint's listening flags, as the user wrote them. */
export interface ListenFlags {
  /** e.g. "http": the flags are `--http-address` and `--http-port`. */
  readonly service: "http" | "grpc" | "metrics";
  readonly address: string;
  readonly port: number;
}

/** Exit status when an endpoint cannot listen (port in use, not permitted, address not on this machine). */
export const EXIT_CODE_CANNOT_LISTEN = 3;

/** Socket errors a user fixes with a flag, and the words for them; found by code or, for grpc-js, in the message. */
const LISTEN_ERRORS: readonly { code: string; words: string; flag: "address" | "port" }[] = [
  { code: "EADDRINUSE", words: "address already in use", flag: "port" },
  { code: "EACCES", words: "permission denied (ports below 1024 need privileges)", flag: "port" },
  { code: "EADDRNOTAVAIL", words: "address not available on this machine", flag: "address" },
];

/**
 * The one line that says which flag to change when an endpoint could not listen (`--metrics-port 8002: address
 * already in use`), or undefined for any other error. fastify and the metrics thread give the socket error's code;
 * grpc-js gives only a message ("No address added ... [listen EADDRINUSE: ...]").
 */
export function describeListenFailure(error: unknown, flags: ListenFlags): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const known = LISTEN_ERRORS.find((e) => code === e.code || message.includes(e.code));
  if (known === undefined) return undefined;
  const value = known.flag === "port" ? flags.port : flags.address;
  return `--${flags.service}-${known.flag} ${value}: ${known.words}`;
}
