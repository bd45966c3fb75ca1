import path from "node:path";
import * as dockerBuild from "@pulumi/docker-build";
import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";
import { deletionPolicy } from "../deletion-policy";

/** Arguments of {@link ServerImage}. */
export interface ServerImageArgs {
  readonly project: string;
  /** Artifact Registry repository id. */
  readonly repositoryId: string;
  /** Artifact Registry location (region or multi-region such as `us`). */
  readonly location: string;
  /** Tag of the image built here. */
  readonly tag: string;
  /** Build context: the repository root (the image needs package.json, the lockfile and server/). */
  readonly contextDir: string;
  /** Dockerfile path, relative to `contextDir`. */
  readonly dockerfile: string;
  /** Nodes pull the image as this service account. */
  readonly nodeServiceAccountEmail: pulumi.Input<string>;
  /** Refuse deletion of the repository (production). */
  readonly protect: boolean;
}

/**
 * The inference server's CUDA image: an Artifact Registry repository that the nodes may read, and the
 * image built from server/Dockerfile.cuda and pushed there. `imageReference` is digest-qualified, so a
 * Deployment changes exactly when the image's content does, whatever the tag.
 */
export class ServerImage extends pulumi.ComponentResource {
  readonly imageReference: pulumi.Output<string>;

  constructor(name: string, args: ServerImageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:ServerImage", name, {}, opts);
    const repository = new gcp.artifactregistry.Repository(`${name}-repository`, {
      project: args.project,
      location: args.location,
      repositoryId: args.repositoryId,
      format: "DOCKER",
      description: "Inference server images",
      cleanupPolicies: [
        { id: "keep-recent", action: "KEEP", mostRecentVersions: { keepCount: 10 } },
        { id: "delete-untagged", action: "DELETE", condition: { tagState: "UNTAGGED", olderThan: "604800s" } },
      ],
      ...deletionPolicy(args.protect),
    }, { parent: this });
    new gcp.artifactregistry.RepositoryIamMember(`${name}-nodes-reader`, {
      project: args.project,
      location: args.location,
      repository: repository.repositoryId,
      role: "roles/artifactregistry.reader",
      member: pulumi.interpolate`serviceAccount:${args.nodeServiceAccountEmail}`,
    }, { parent: this });
    const registry = `${args.location}-docker.pkg.dev`;
    const imageName = pulumi.interpolate`${registry}/${args.project}/${repository.repositoryId}/inference-server`;
    const image = new dockerBuild.Image(`${name}-cuda`, {
      context: { location: args.contextDir },
      dockerfile: { location: path.join(args.contextDir, args.dockerfile) },
      platforms: ["linux/amd64"],
      tags: [pulumi.interpolate`${imageName}:${args.tag}`],
      push: true,
      // A CUDA image build is minutes of work; previews in pull requests check the program, not the image.
      buildOnPreview: false,
      cacheFrom: [{ registry: { ref: pulumi.interpolate`${imageName}:buildcache` } }],
      cacheTo: [{ registry: { ref: pulumi.interpolate`${imageName}:buildcache`, imageManifest: true, ociMediaTypes: true } }],
      registries: [{
        address: registry,
        username: "oauth2accesstoken",
        password: gcp.organizations.getClientConfigOutput({ parent: this }).accessToken,
      }],
    }, { parent: this, dependsOn: [repository] });
    this.imageReference = image.ref;
    this.registerOutputs({ imageReference: this.imageReference });
  }
}
