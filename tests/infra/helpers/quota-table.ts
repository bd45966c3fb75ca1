import { estimateStackQuotas } from "../../../infra/plan/quota-estimate";
import { type StackConfig } from "../../../infra/stack-config";

/** The plan's quota lines as `<scope> <metric> <min>/<max>/<max with surge>`. */
export function quotaTable(config: StackConfig): string[] {
  return estimateStackQuotas(config).lines.map((quota) => `${quota.scope} ${quota.metric} ${quota.min}/${quota.max}/${quota.maxWithSurge}`);
}
