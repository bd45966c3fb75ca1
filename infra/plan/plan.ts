import path from "node:path";
import { Command } from "@commander-js/extra-typings";
import { loadConfig } from "../config";
import { type StackConfig } from "../stack-config";
import { createStack, repositorySources } from "../stack";
import { estimateStackCost } from "./cost-estimate";
import { estimateStackQuotas } from "./quota-estimate";
import { renderPlan } from "./render-plan";
import { buildResourceTree } from "./resource-tree";
import { runProgramOffline } from "./run-program-offline";
import { readStackFile } from "./stack-file";

/** Which stack to plan, and where its project lives. */
export interface PlanOptions {
  /** Folder with Pulumi.yaml, Pulumi.<stack>.yaml, dashboards/ and the model repository. */
  readonly projectRoot: string;
  readonly stack: string;
}

/**
 * Runs the Pulumi program for a stack file exactly as `pulumi up` would (same config loading, same code),
 * but against mocks, and renders what it would create and what it would cost. Needs no CLI, cloud or credentials.
 */
export async function planStack(options: PlanOptions): Promise<string> {
  const stackFile = readStackFile(options.projectRoot, options.stack);
  let config: StackConfig | undefined;
  const { mocks, outputs } = await runProgramOffline(() => {
    config = loadConfig();
    return createStack(config, repositorySources(options.projectRoot));
  }, { project: stackFile.project, stack: options.stack, config: stackFile.config, secretKeys: stackFile.secretKeys });
  if (config === undefined) throw new Error("the program did not run");
  return renderPlan({
    project: stackFile.project,
    stack: options.stack,
    tree: buildResourceTree(mocks.resources),
    calls: mocks.calls,
    outputs,
    cost: estimateStackCost(config),
    quotas: estimateStackQuotas(config),
  });
}

if (require.main === module) {
  const options = new Command()
    .name("plan")
    .description("Print what `pulumi preview` would create for a stack, offline (the program runs under mocks).")
    .option("--stack <name>", "stack whose Pulumi.<name>.yaml to read", "dev")
    .option("--project-root <dir>", "folder holding Pulumi.yaml", path.resolve(__dirname, "..", ".."))
    .parse(process.argv)
    .opts();
  planStack({ stack: options.stack, projectRoot: path.resolve(options.projectRoot) })
    .then((text) => console.log(text))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    });
}
