import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { runProgramOffline } from "../../../infra/plan/run-program-offline";
import { type DeclaredCall, type DeclaredResource } from "../../../infra/plan/recording-mocks";
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

/**
 * Runs the real program (createStack) for `raw` config with the fixture dashboards and model repository.
 * Pulumi's runtime is process-global: call it once per test file.
 */
export async function runFixtureStack(raw: RawStackConfig, options: { readonly stack: string; readonly grafanaAdminPassword?: string }): Promise<FixtureStack> {
  let config: StackConfig | undefined;
  const run = await runProgramOffline(() => {
    const parsed = parseStackConfig(
      { ...raw, modelRepository: { ...raw.modelRepository, sourceDir: FIXTURE_MODEL_REPOSITORY_DIR } },
      { stack: options.stack, namespace: PULUMI_PROJECT },
    );
    config = options.grafanaAdminPassword === undefined ? parsed : { ...parsed, grafanaAdminPassword: pulumi.secret(options.grafanaAdminPassword) };
    return createStack(config, { projectRoot: path.resolve(FIXTURES_DIR, "..", "..", ".."), dashboardsDir: FIXTURE_DASHBOARDS_DIR });
  }, { project: PULUMI_PROJECT, stack: options.stack });
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
