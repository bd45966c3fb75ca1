import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../infra/config";
import { type DeclaredResource } from "../../../infra/plan/recording-mocks";
import { runProgramOffline } from "../../../infra/plan/run-program-offline";
import { readStackFile } from "../../../infra/plan/stack-file";
import { infraPolicies } from "../../../infra/policy/policies";
import { type StackConfig } from "../../../infra/stack-config";
import { createStack, repositorySources } from "../../../infra/stack";
import { FIXTURE_MODEL_REPOSITORY_DIR } from "./fixture-stack";
import { kubernetesObjectOf, schemaProblems } from "./kubernetes-schemas";

const REPOSITORY_ROOT = path.resolve(__dirname, "..", "..", "..");

/** A committed stack file's program run, everything switched on: the load test and every secret. */
export interface StackFileRun {
  readonly config: StackConfig;
  readonly resources: readonly DeclaredResource[];
}

// Secrets the stack files name but cannot hold in the repository; set, so the objects they add are checked too.
const SECRETS = {
  grafanaAdminPassword: "stack-file-check-password",
  adminKey: "stack-file-check-admin-key",
  alertmanagerConfig: "route:\n  receiver: oncall\nreceivers:\n  - name: oncall\n",
};

/**
 * Runs the program for the repository's `Pulumi.<stack>.yaml` exactly as `pulumi up` reads it (same loader,
 * real dashboards/ and alerts.yaml; the fixture model repository stands in for the generated models/), with
 * the load test on and every secret set, and checks what it declares: every rule of the policy pack passes on
 * every resource, and every Kubernetes object passes the official schemas strictly.
 * Pulumi's runtime is process-global: one stack per test file.
 */
export function describeStackFileChecks(stack: string): () => StackFileRun {
  let projectRoot: string;
  let run: StackFileRun;
  beforeAll(async () => {
    projectRoot = fs.mkdtempSync(path.join(os.tmpdir(), `infra-${stack}-stack-file-`));
    for (const file of ["Pulumi.yaml", `Pulumi.${stack}.yaml`]) fs.copyFileSync(path.join(REPOSITORY_ROOT, file), path.join(projectRoot, file));
    fs.cpSync(path.join(REPOSITORY_ROOT, "dashboards"), path.join(projectRoot, "dashboards"), { recursive: true });
    fs.cpSync(FIXTURE_MODEL_REPOSITORY_DIR, path.join(projectRoot, "models"), { recursive: true });
    fs.mkdirSync(path.join(projectRoot, "server"));
    fs.copyFileSync(path.join(REPOSITORY_ROOT, "server", "Dockerfile.cuda"), path.join(projectRoot, "server", "Dockerfile.cuda"));
    const stackFile = readStackFile(projectRoot, stack);
    const key = (name: string) => `${stackFile.project}:${name}`;
    const loadTest = JSON.parse(stackFile.config[key("loadTest")] ?? "{}") as Record<string, unknown>;
    const secretEntries = Object.entries(SECRETS).map(([name, value]) => [key(name), value] as const);
    let config: StackConfig | undefined;
    const { mocks } = await runProgramOffline(() => {
      config = loadConfig();
      return createStack(config, repositorySources(projectRoot));
    }, {
      project: stackFile.project,
      stack,
      config: { ...stackFile.config, [key("loadTest")]: JSON.stringify({ ...loadTest, enabled: true }), ...Object.fromEntries(secretEntries) },
      secretKeys: [...stackFile.secretKeys, ...secretEntries.map(([name]) => name)],
    });
    if (config === undefined) throw new Error("the program did not run");
    run = { config, resources: mocks.resources };
  });
  afterAll(() => {
    fs.rmSync(projectRoot, { recursive: true, force: true });
  });

  describe(`Pulumi.${stack}.yaml (load test on, secrets set)`, () => {
    it("passes every rule of the policy pack on every resource", () => {
      const violations = run.resources.flatMap((resource) => infraPolicies.flatMap((policy) =>
        policy.check({ type: resource.type, props: resource.inputs }).map((message) => `${policy.name} on ${resource.type} ${resource.name}: ${message}`)));
      expect(violations).toEqual([]);
    });

    it("renders only Kubernetes objects that the official schemas accept, unknown fields refused", () => {
      const objects = run.resources.flatMap((resource) => {
        const object = kubernetesObjectOf(resource);
        return object === undefined ? [] : [{ resource, object }];
      });
      expect([...new Set(objects.map(({ object }) => object.kind))]).toEqual(expect.arrayContaining(["Deployment", "Service", "Job", "PodMonitor", "PrometheusRule", "Secret"]));
      const problems = objects.flatMap(({ resource, object }) => schemaProblems(object).map((problem) => `${resource.name} (${object.kind}): ${problem}`));
      expect(problems).toEqual([]);
    });
  });
  return () => run;
}
