// Rules over the GitHub workflow files (.github/workflows), which Pulumi's policy pack never sees:
// tests/infra/workflows.test.ts runs them over every workflow, with a failing example for each.

/** A workflow job, as much of it as the rules read. */
export interface WorkflowJob {
  readonly environment?: string | { readonly name: string };
  readonly steps?: readonly { readonly uses?: string; readonly with?: Readonly<Record<string, unknown>> }[];
}

/** One rule over a workflow's jobs, returning one message per violation. */
export interface WorkflowRule {
  readonly name: string;
  readonly description: string;
  check(jobs: Readonly<Record<string, WorkflowJob>>): string[];
}

const environmentOf = (job: WorkflowJob) => (typeof job.environment === "object" ? job.environment.name : job.environment);
const googleAuthOf = (job: WorkflowJob) => job.steps?.find((step) => step.uses?.startsWith("google-github-actions/auth@"))?.with;

/**
 * One deployer per environment. A job's OIDC token names its environment only when the job declares one
 * (GitHub docs, "OpenID Connect reference", subject `repo:<owner>/<repo>:environment:<name>`:
 * https://docs.github.com/en/actions/reference/security/oidc), and the deployer's `roles/iam.workloadIdentityUser`
 * binding admits exactly such a subject (google-github-actions/auth README, "Direct Workload Identity
 * Federation" / "Workload Identity Federation through a Service Account": principal://.../subject/<subject>). Two
 * environments that share a service account share its rights: any commit on main runs the unreviewed dev job with
 * credentials that can change prod (issue 39, item 3).
 */
export const deployerPerEnvironment: WorkflowRule = {
  name: "deployer-per-environment",
  description: "Every job that authenticates to Google runs in a GitHub environment, and no two environments deploy as the same service account.",
  check(jobs) {
    const violations: string[] = [];
    const seen = new Map<string, string>();
    for (const [name, job] of Object.entries(jobs)) {
      const auth = googleAuthOf(job);
      if (auth === undefined) continue;
      const environment = environmentOf(job);
      if (environment === undefined) {
        violations.push(`job ${name} authenticates to Google outside a GitHub environment: its token's subject names no environment a deployer could be bound to`);
        continue;
      }
      const account = String(auth["service_account"] ?? "");
      const other = seen.get(account);
      if (other !== undefined && other !== environment) violations.push(`job ${name} (environment ${environment}) deploys as ${account}, the service account of environment ${other}: one deployer per environment`);
      else seen.set(account, environment);
    }
    return violations;
  },
};

/** Every workflow rule, in the order they are reported. */
export const workflowRules: readonly WorkflowRule[] = [deployerPerEnvironment];
