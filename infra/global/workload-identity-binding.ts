import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";

/** Arguments of {@link WorkloadIdentityBinding}. */
export interface WorkloadIdentityBindingArgs {
  readonly project: string;
  /** The Google service account the pods act as. */
  readonly serviceAccountId: pulumi.Input<string>;
  readonly kubernetesNamespace: string;
  readonly kubernetesServiceAccount: string;
  /**
   * The cluster(s) whose pods use the binding: the project's workload identity pool exists only once a cluster
   * with Workload Identity does, and binding before that fails with "Identity Pool does not exist".
   */
  readonly clusters: readonly pulumi.Resource[];
}

/**
 * Lets the Kubernetes service account `namespace/name` act as the server's Google service account. The pool is
 * per project, so a binding would cover a service account of that name in every cluster; the stack makes one per
 * region, for that region's own service account name, so that each waits for its own cluster only.
 */
export class WorkloadIdentityBinding extends pulumi.ComponentResource {
  constructor(name: string, args: WorkloadIdentityBindingArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:WorkloadIdentityBinding", name, {}, opts);
    new gcp.serviceaccount.IAMMember(`${name}-workload-identity-user`, {
      serviceAccountId: args.serviceAccountId,
      role: "roles/iam.workloadIdentityUser",
      member: `serviceAccount:${args.project}.svc.id.goog[${args.kubernetesNamespace}/${args.kubernetesServiceAccount}]`,
    }, { parent: this, dependsOn: [...args.clusters] });
    this.registerOutputs({});
  }
}
