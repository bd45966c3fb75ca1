import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";

/** Cloud Armor's lowest priority: the rule that applies when no other matches. */
const DEFAULT_RULE_PRIORITY = 2_147_483_647;

const everySourceAddress = { versionedExpr: "SRC_IPS_V1", config: { srcIpRanges: ["*"] } };

/**
 * The backend security policy: each client IP may send `requestsPerMinute` requests per minute, then gets
 * HTTP 429 until its rate drops (throttle, not a ban, so a bursty but honest client recovers at once).
 * The default rule is written out because the API adds one anyway and would otherwise show as a diff.
 */
export function createCloudArmorPolicy(
  name: string,
  args: { readonly project: string; readonly requestsPerMinute: number },
  opts: pulumi.CustomResourceOptions,
): gcp.compute.SecurityPolicy {
  return new gcp.compute.SecurityPolicy(name, {
    project: args.project,
    description: "Per-client rate limit in front of the inference server",
    type: "CLOUD_ARMOR",
    rules: [
      {
        priority: 1000,
        description: "Throttle each client IP",
        action: "throttle",
        match: everySourceAddress,
        rateLimitOptions: {
          conformAction: "allow",
          exceedAction: "deny(429)",
          enforceOnKey: "IP",
          rateLimitThreshold: { count: args.requestsPerMinute, intervalSec: 60 },
        },
      },
      { priority: DEFAULT_RULE_PRIORITY, description: "Default: allow", action: "allow", match: everySourceAddress },
    ],
  }, opts);
}
