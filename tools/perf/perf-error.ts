/**
 * A problem with what the user asked for (unknown model, unreachable server, missing --shape): `main` prints
 * its message as one line, without a stack, and exits 1.
 */
export class PerfError extends Error {
  override readonly name = "PerfError";
}
