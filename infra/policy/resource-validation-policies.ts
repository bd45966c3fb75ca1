import { type ResourceValidationPolicy } from "@pulumi/policy";
import { type InfraPolicy } from "./policies";

/** Wraps the plain rules as @pulumi/policy resource policies: each violation message is reported as is. */
export function toResourceValidationPolicies(policies: readonly InfraPolicy[]): ResourceValidationPolicy[] {
  return policies.map((policy) => ({
    name: policy.name,
    description: policy.description,
    enforcementLevel: policy.enforcementLevel,
    validateResource: (args, reportViolation) => {
      for (const violation of policy.check({ type: args.type, props: args.props })) reportViolation(violation);
    },
  }));
}
