/** A failure the user can act on (bad input, missing data): reported as one line, without a stack. */
export class OptimizeError extends Error {
  override readonly name = "OptimizeError";
}
