import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { type StackConfig } from "../stack-config";

/** Cloud Armor's lowest priority: the rule that applies when no other matches. */
const DEFAULT_RULE_PRIORITY = 2_147_483_647;

const everySourceAddress = { versionedExpr: "SRC_IPS_V1", config: { srcIpRanges: ["*"] } };

/**
 * Cloud Armor's preconfigured WAF rules (OWASP Core Rule Set 3.3) that apply to an inference API: injections
 * and inclusions in paths, headers and JSON bodies, Node.js-specific attacks, scanners, protocol attacks
 * (request smuggling, header injection) and methods other than GET/HEAD/POST/OPTIONS.
 */
const WAF_RULES = [
  "sqli-v33-stable", "xss-v33-stable", "lfi-v33-stable", "rfi-v33-stable", "rce-v33-stable",
  "methodenforcement-v33-stable", "scannerdetection-v33-stable", "protocolattack-v33-stable", "nodejs-v33-stable",
] as const;

/**
 * Where the WAF looks: REST requests only. gRPC bodies are protobuf and binary tensor bodies (the binary tensor
 * extension) are raw bytes, and the CRS signatures read bytes that happen to spell `union select` or `<script`
 * as attacks: false 403s on legitimate inference. gRPC is told apart by its path (every public method is
 * /inference.GRPCInferenceService/<method>); binary REST bodies cannot be told apart by path, which is why the
 * WAF starts in preview (`loadBalancer.waf.preview`, default true) until its logs show no hit on real traffic.
 */
export const WAF_SCOPE = "!request.path.startsWith('/inference.GRPCInferenceService/')";

/** The policy's rules: the WAF rules, the per-client throttle and the default rule (Cloud Armor bills per rule). */
export const CLOUD_ARMOR_RULE_COUNT = WAF_RULES.length + 2;

/** Arguments of {@link createCloudArmorPolicy}. */
export interface CloudArmorPolicyArgs {
  readonly project: string;
  readonly requestsPerMinute: number;
  /**
   * `sensitivity` 1-4: the OWASP paranoia level of the WAF signatures enabled (1 has the fewest false positives);
   * `preview`: log what the WAF rules would block without blocking it (to tune the sensitivity on real traffic).
   */
  readonly waf: StackConfig["loadBalancer"]["waf"];
}

/**
 * The backend security policy: first the preconfigured WAF rules (403) on REST requests, then a per-client rate limit: each
 * client IP may send `requestsPerMinute` requests per minute, then gets HTTP 429 until its rate drops
 * (throttle, not a ban, so a bursty but honest client recovers at once). JSON bodies are parsed, so the WAF
 * reads tensor values as values, not as text that happens to look like SQL. The default rule is written out
 * because the API adds one anyway and would otherwise show as a diff.
 */
export function createCloudArmorPolicy(name: string, args: CloudArmorPolicyArgs, opts: pulumi.CustomResourceOptions): gcp.compute.SecurityPolicy {
  return new gcp.compute.SecurityPolicy(name, {
    project: args.project,
    description: "WAF and per-client rate limit in front of the inference server",
    type: "CLOUD_ARMOR",
    advancedOptionsConfig: { jsonParsing: "STANDARD", logLevel: "NORMAL" },
    rules: [
      ...WAF_RULES.map((rule, index) => ({
        priority: 100 + index,
        description: `Preconfigured WAF: ${rule}`,
        action: "deny(403)",
        preview: args.waf.preview,
        match: { expr: { expression: `${WAF_SCOPE} && evaluatePreconfiguredWaf('${rule}', {'sensitivity': ${args.waf.sensitivity}})` } },
      })),
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
