/**
 * A problem with what the user asked for or with their model (no such model, a starting config that does not load,
 * no candidate meeting the constraints): `main` prints its message as one line, without a stack, and exits 1.
 */
export class TuneError extends Error {
  override readonly name = "TuneError";
}
