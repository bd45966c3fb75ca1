import { type CostEstimate, renderCostEstimate } from "./cost-estimate";
import { describeKeyProperties } from "./key-properties";
import { type QuotaEstimate, renderQuotaEstimate } from "./quota-estimate";
import { type DeclaredCall } from "./recording-mocks";
import { countResourcesByScope, type ResourceCount, type ResourceNode } from "./resource-tree";

/** Everything a plan shows. */
export interface PlanContents {
  readonly project: string;
  readonly stack: string;
  readonly tree: ResourceNode;
  readonly calls: readonly DeclaredCall[];
  readonly outputs: unknown;
  readonly cost: CostEstimate;
  readonly quotas: QuotaEstimate;
}

function renderNode(node: ResourceNode, depth: number, lines: string[]): void {
  const properties = describeKeyProperties(node.resource);
  lines.push(`${"  ".repeat(depth)}+ ${node.resource.type}  ${node.resource.name}${properties === "" ? "" : `  (${properties})`}`);
  for (const child of node.children) renderNode(child, depth + 1, lines);
}

function renderCount(label: string, count: ResourceCount): string {
  return `  ${label.padEnd(24)} ${String(count.total).padStart(4)} resources (${count.custom} cloud/Kubernetes, ${count.total - count.custom} components)`;
}

/**
 * The text `npm run plan` prints: the resource tree with key properties (what `pulumi preview` would
 * create), the data-source lookups, resource counts per region and globally, the cost estimate at the
 * stack's smallest and largest scale, the Compute Engine quotas it needs at those scales, and the stack outputs.
 */
export function renderPlan(plan: PlanContents): string {
  const lines = [
    `Plan for stack '${plan.stack}' of project '${plan.project}' (offline, under mocks: what \`pulumi preview\` would create)`,
    "",
  ];
  renderNode(plan.tree, 0, lines);
  const lookups = new Map<string, number>();
  for (const call of plan.calls) lookups.set(call.token, (lookups.get(call.token) ?? 0) + 1);
  lines.push("", "Data-source lookups:", ...[...lookups].map(([token, count]) => `  ${token} x${count}`));
  const counts = countResourcesByScope(plan.tree);
  lines.push("", "Resource counts:", renderCount("global", counts.global));
  for (const [region, count] of Object.entries(counts.regions)) lines.push(renderCount(`region ${region}`, count));
  const all = [counts.global, ...Object.values(counts.regions)];
  lines.push(`  ${"total".padEnd(24)} ${String(all.reduce((sum, count) => sum + count.total, 0)).padStart(4)} resources (+1 stack)`);
  lines.push("", ...renderCostEstimate(plan.cost));
  lines.push("", ...renderQuotaEstimate(plan.quotas));
  lines.push("", "Outputs:", JSON.stringify(plan.outputs, null, 2));
  return lines.join("\n");
}
