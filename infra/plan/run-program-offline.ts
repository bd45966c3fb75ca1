import * as pulumi from "@pulumi/pulumi";
import { RecordingMocks } from "./recording-mocks";

/** Where the offline run happens: Pulumi's project and stack names, and the raw stack config. */
export interface OfflineRunOptions {
  /** Pulumi project name (Pulumi.yaml `name`); config keys are namespaced by it. */
  readonly project: string;
  readonly stack: string;
  /** Config as `pulumi config` holds it: `"<namespace>:<key>"` to a string (objects as JSON). */
  readonly config?: Readonly<Record<string, string>>;
  /** Config keys (of `config`) that are secrets. */
  readonly secretKeys?: readonly string[];
}

/**
 * Runs a Pulumi program under {@link RecordingMocks} (no engine, no cloud, no credentials) and returns
 * everything it declared once every registration has settled. Pulumi's runtime state is process-global, so
 * run at most one program per process (vitest runs each test file in its own fork).
 *
 * @param program declares the resources; runs as the stack's body, its result becomes the stack outputs.
 */
export async function runProgramOffline<T>(
  program: () => T,
  options: OfflineRunOptions,
): Promise<{ readonly mocks: RecordingMocks; readonly outputs: pulumi.Unwrap<T> }> {
  const gcpProject = options.config?.["gcp:project"] ?? "offline-project";
  const mocks = new RecordingMocks(gcpProject);
  await pulumi.runtime.setMocks(mocks, options.project, options.stack, false);
  pulumi.runtime.setAllConfig({ ...options.config }, [...(options.secretKeys ?? [])]);
  // A program error is rethrown here rather than left to reject the stack's own promises, which nothing
  // awaits and which would surface a second time as an unhandled rejection.
  let failure: { readonly error: unknown } | undefined;
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
  if (failure !== undefined) throw failure.error;
  return { mocks, outputs: outputs as pulumi.Unwrap<T> };
}
