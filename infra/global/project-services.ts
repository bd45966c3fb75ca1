import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";

/**
 * Every Google API the program calls, directly or through GKE. Enabling one needs Service Usage and Cloud
 * Resource Manager already on (the README's preflight enables those two).
 */
const REQUIRED_APIS = [
  "compute.googleapis.com", // VPC, firewall, NAT, load balancer, Cloud Armor, managed certificates
  "container.googleapis.com", // GKE
  "containerfilesystem.googleapis.com", // image streaming on the node pools
  "artifactregistry.googleapis.com", // the server image
  "storage.googleapis.com", // the model bucket
  "iam.googleapis.com", // service accounts and their bindings
  "iamcredentials.googleapis.com", // Workload Identity token exchange for the pods
  "cloudresourcemanager.googleapis.com", // project IAM bindings
  "monitoring.googleapis.com", // GKE system metrics and Managed Prometheus (DCGM)
  "logging.googleapis.com", // GKE and load balancer logs
] as const;

/** Arguments of {@link ProjectServices}. */
export interface ProjectServicesArgs {
  readonly project: string;
}

/**
 * Turns on every API in {@link REQUIRED_APIS}. Everything else in the stack waits for them (components take
 * `dependsOn: services`), so a fresh project needs no manual `gcloud services enable` beyond the preflight.
 * `pulumi destroy` leaves the APIs on: other workloads in the project may use them.
 */
export class ProjectServices extends pulumi.ComponentResource {
  readonly services: readonly gcp.projects.Service[];

  constructor(name: string, args: ProjectServicesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:ProjectServices", name, {}, opts);
    this.services = REQUIRED_APIS.map((service) => new gcp.projects.Service(`${name}-${service.split(".")[0]}`, {
      project: args.project,
      service,
      disableOnDestroy: false,
      disableDependentServices: false,
    }, { parent: this }));
    this.registerOutputs({ services: this.services.map((service) => service.service) });
  }
}
