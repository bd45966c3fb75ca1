import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";

/**
 * The restricted APIs' key: the stack's `adminKey` secret when set, otherwise a random 40-character key kept
 * (encrypted) in the stack's state. Either way it is a secret output: `pulumi stack output adminKey --show-secrets`.
 */
export function restrictedApiKey(name: string, configured: pulumi.Output<string> | undefined): pulumi.Output<string> {
  if (configured !== undefined) return pulumi.secret(configured);
  return new random.RandomPassword(name, { length: 40, special: false }).result;
}
