import * as pulumi from "@pulumi/pulumi";
import { type NegAvailability, RecordingMocks } from "./recording-mocks";

/** Where the offline run happens: Pulumi's project and stack names, and the raw stack config. */
export interface OfflineRunOptions {
  /** Pulumi project name (Pulumi.yaml `name`); config keys are namespaced by it. */
  readonly project: string;
  readonly stack: string;
  /** Config as `pulumi config` holds it: `"<namespace>:<key>"` to a string (objects as JSON). */
  readonly config?: Readonly<Record<string, string>>;
  /** Config keys (of `config`) that are secrets. */
  readonly secretKeys?: readonly string[];
  /** Run as `pulumi preview` would (default: as `pulumi up`). */
  readonly preview?: boolean;
  /** When the mocked Compute API has each standalone NEG (default: always). */
  readonly negAvailability?: NegAvailability;
}

/**
 * Collects the errors a program raises asynchronously (an Output's apply that throws): the Pulumi language host
 * reports those from `unhandledRejection`, so the offline run listens there too, in place of the process's
 * own listeners, for as long as the program runs.
 */
class UncaughtProgramErrors {
  readonly errors: unknown[] = [];
  readonly #previous = process.listeners("unhandledRejection");
  readonly #listener = (error: unknown): void => {
    this.errors.push(error);
    this.#wake();
  };
  #wake: () => void = () => undefined;
  /** Resolves at the first error. */
  readonly first = new Promise<void>((resolve) => {
    this.#wake = resolve;
  });

  constructor() {
    process.removeAllListeners("unhandledRejection");
    process.on("unhandledRejection", this.#listener);
  }

  restore(): void {
    process.removeListener("unhandledRejection", this.#listener);
    for (const listener of this.#previous) process.on("unhandledRejection", listener);
  }
}

/** Once a program has failed, how long its other failing registrations get to report before the run ends. */
const FAILURE_SETTLE_MS = 100;

/**
 * Runs a Pulumi program under {@link RecordingMocks} (no engine, no cloud, no credentials) and returns
 * everything it declared once every registration has settled. Pulumi's runtime state is process-global, so
 * run at most one program per process (vitest runs each test file in its own fork). A program that throws,
 * at once or later in an Output, rejects with its first error, as `pulumi up` would fail with it.
 *
 * @param program declares the resources; runs as the stack's body, its result becomes the stack outputs.
 */
export async function runProgramOffline<T>(
  program: () => T,
  options: OfflineRunOptions,
): Promise<{ readonly mocks: RecordingMocks; readonly outputs: pulumi.Unwrap<T> }> {
  const gcpProject = options.config?.["gcp:project"] ?? "offline-project";
  const mocks = new RecordingMocks(gcpProject, options.negAvailability);
  await pulumi.runtime.setMocks(mocks, options.project, options.stack, options.preview ?? false);
  pulumi.runtime.setAllConfig({ ...options.config }, [...(options.secretKeys ?? [])]);
  // A program error is rethrown here rather than left to reject the stack's own promises, which nothing
  // awaits and which would surface a second time as an unhandled rejection.
  let failure: { readonly error: unknown } | undefined;
  const uncaught = new UncaughtProgramErrors();
  try {
    // A registration whose input failed leaves the outputs that depend on it unresolved: stop at the first error.
    const settled = await Promise.race([
      (async () => {
        const outputs = await pulumi.runtime.runInPulumiStack(async () => {
          try {
            return program();
          } catch (error) {
            failure = { error };
            return undefined;
          }
        });
        // Registrations that no stack output depends on may still be in flight.
        await pulumi.runtime.disconnect();
        return { outputs };
      })(),
      uncaught.first.then(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), FAILURE_SETTLE_MS))),
    ]);
    failure ??= uncaught.errors.length > 0 ? { error: uncaught.errors[0] } : undefined;
    if (failure !== undefined) throw failure.error;
    if (settled === undefined) throw new Error("the program stopped without a result");
    return { mocks, outputs: settled.outputs as pulumi.Unwrap<T> };
  } finally {
    uncaught.restore();
  }
}
