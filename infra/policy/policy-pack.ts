// The Pulumi policy pack (`pulumi preview --policy-pack infra/policy`). Constructing a PolicyPack starts
// its gRPC server, so only the pack's entry point (index.js) imports this file; tests use the rules.
import { PolicyPack } from "@pulumi/policy";
import { infraPolicies } from "./policies";
import { toResourceValidationPolicies } from "./resource-validation-policies";

new PolicyPack("gpu-inference", { policies: toResourceValidationPolicies(infraPolicies) });
