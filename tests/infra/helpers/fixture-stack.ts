import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { runProgramOffline } from "../../../infra/plan/run-program-offline";
import { type DeclaredCall, type DeclaredResource, type NegAvailability } from "../../../infra/plan/recording-mocks";
import { parseStackConfig, type RawStackConfig, type StackConfig } from "../../../infra/stack-config";
import { createStack, type StackOutputs } from "../../../infra/stack";

export const PULUMI_PROJECT = "gpu-inference";
export const FIXTURES_DIR = path.resolve(__dirname, "..", "fixtures");
export const FIXTURE_DASHBOARDS_DIR = path.join(FIXTURES_DIR, "dashboards");
export const FIXTURE_MODEL_REPOSITORY_DIR = path.join(FIXTURES_DIR, "model-repository");

/** One program run under mocks over the test fixtures, and what it declared. */
export interface FixtureStack {
  readonly config: StackConfig;
  readonly resources: readonly DeclaredResource[];
  readonly calls: readonly DeclaredCall[];
  readonly outputs: pulumi.Unwrap<StackOutputs>;
}

/** How to run the fixture stack. */
export interface FixtureStackOptions {
  readonly stack: string;
  readonly grafanaAdminPassword?: string;
  readonly alertmanagerConfig?: string;
  /** Run as `pulumi preview` (default: `pulumi up`). */
  readonly preview?: boolean;
  /** When the mocked Compute API has each standalone NEG (default: always). */
  readonly negAvailability?: NegAvailability;
}

/**
 * Runs the real program (createStack) for `raw` config with the fixture dashboards and model repository.
 * Pulumi's runtime is process-global: call it once per test file.
 */
export async function runFixtureStack(raw: RawStackConfig, options: FixtureStackOptions): Promise<FixtureStack> {
  let config: StackConfig | undefined;
  const run = await runProgramOffline(() => {
    const parsed = parseStackConfig(
      { ...raw, modelRepository: { ...raw.modelRepository, sourceDir: FIXTURE_MODEL_REPOSITORY_DIR } },
      { stack: options.stack, namespace: PULUMI_PROJECT },
    );
    config = {
      ...parsed,
      ...(options.grafanaAdminPassword === undefined ? {} : { grafanaAdminPassword: pulumi.secret(options.grafanaAdminPassword) }),
      ...(options.alertmanagerConfig === undefined ? {} : { alertmanagerConfig: pulumi.secret(options.alertmanagerConfig) }),
    };
    return createStack(config, { projectRoot: path.resolve(FIXTURES_DIR, "..", "..", ".."), dashboardsDir: FIXTURE_DASHBOARDS_DIR });
  }, {
    project: PULUMI_PROJECT,
    stack: options.stack,
    ...(options.preview === undefined ? {} : { preview: options.preview }),
    ...(options.negAvailability === undefined ? {} : { negAvailability: options.negAvailability }),
  });
  if (config === undefined) throw new Error("the program did not run");
  return { config, resources: run.mocks.resources, calls: run.mocks.calls, outputs: run.outputs };
}

/** The one resource of `type` named `name`; fails the test when there is not exactly one. */
export function resourceNamed(stack: FixtureStack, type: string, name: string): DeclaredResource {
  const matches = stack.resources.filter((resource) => resource.type === type && resource.name === name);
  if (matches.length !== 1) throw new Error(`expected one ${type} named ${name}, found ${matches.length}`);
  return matches[0] as DeclaredResource;
}

export function resourcesOfType(stack: FixtureStack, type: string): DeclaredResource[] {
  return stack.resources.filter((resource) => resource.type === type);
}

/** Reads a nested input, e.g. `input(resource, "spec", "template")`. */
export function input(resource: DeclaredResource, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((value, key) => (typeof value === "object" && value !== null ? (value as Record<string | number, unknown>)[key] : undefined), resource.inputs);
}
