import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";

/** Arguments of {@link ServiceAccounts}. */
export interface ServiceAccountsArgs {
  readonly project: string;
  /** Prefix of the account ids (GCP allows 6-30 characters). */
  readonly namePrefix: string;
}

/**
 * The two identities of the stack, never the Compute Engine default account:
 * - nodes: what every GKE node runs as; `roles/container.defaultNodeServiceAccount` (logs, metrics) and
 *   `roles/serviceusage.serviceUsageConsumer` (image streaming calls the Container File System API as the
 *   node's account), plus read access to the image repository granted where the repository is made;
 * - server: what the inference pods act as through Workload Identity; read access to the model bucket is
 *   granted on the bucket itself.
 *
 * Both may exist before the first `pulumi up` (createIgnoreAlreadyExists adopts them): a project owner creates
 * them once and grants the deployer `roles/iam.serviceAccountUser` on these two only (infra/README.md, "Deployer
 * permissions"), because a project-wide grant would let the deployer act as every account of the project
 * (policy rule no-project-wide-service-account-user). GKE asks for actAs on the node account when it creates the
 * cluster and its pools, before Pulumi could grant it.
 */
export class ServiceAccounts extends pulumi.ComponentResource {
  readonly nodeAccount: gcp.serviceaccount.Account;
  readonly serverAccount: gcp.serviceaccount.Account;

  constructor(name: string, args: ServiceAccountsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:ServiceAccounts", name, {}, opts);
    this.nodeAccount = new gcp.serviceaccount.Account(`${name}-nodes`, {
      project: args.project,
      accountId: `${args.namePrefix}-nodes`,
      displayName: "GKE nodes of the inference clusters",
      createIgnoreAlreadyExists: true,
    }, { parent: this });
    const nodeRoles = [
      ["default-node-role", "roles/container.defaultNodeServiceAccount"],
      ["image-streaming-role", "roles/serviceusage.serviceUsageConsumer"],
    ] as const;
    for (const [suffix, role] of nodeRoles) {
      new gcp.projects.IAMMember(`${name}-nodes-${suffix}`, {
        project: args.project,
        role,
        member: pulumi.interpolate`serviceAccount:${this.nodeAccount.email}`,
      }, { parent: this });
    }
    this.serverAccount = new gcp.serviceaccount.Account(`${name}-server`, {
      project: args.project,
      accountId: `${args.namePrefix}-server`,
      displayName: "Inference server pods (Workload Identity)",
      createIgnoreAlreadyExists: true,
    }, { parent: this });
    this.registerOutputs({ nodeAccount: this.nodeAccount.email, serverAccount: this.serverAccount.email });
  }
}
