import path from "node:path";
import * as dockerBuild from "@pulumi/docker-build";
import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";
import { deletionPolicy } from "../deletion-policy";

/** Tagged images older than this are deleted (unless among the newest or the build cache). */
export const TAGGED_RETENTION_DAYS = 30;
/** The newest image versions Artifact Registry always keeps, whatever their age. */
export const KEEP_NEWEST_VERSIONS = 10;
/** The tag of the BuildKit layer cache (registry cache export); never cleaned up. */
const BUILD_CACHE_TAG = "buildcache";

/** Arguments of {@link ServerImage}. */
export interface ServerImageArgs {
  readonly project: string;
  /** Artifact Registry repository id. */
  readonly repositoryId: string;
  /** Artifact Registry location (region or multi-region such as `us`). */
  readonly location: string;
  /** Tag of the image built here; by default a content hash of its inputs (see imageContentTag). */
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
      // KEEP wins over DELETE: a version matched by both stays. Tagged versions go after 30 days (a KEEP
      // policy alone only exempts; it deletes nothing), except the 10 newest and the build cache.
      cleanupPolicies: [
        { id: "delete-tagged-after-30d", action: "DELETE", condition: { tagState: "TAGGED", olderThan: `${TAGGED_RETENTION_DAYS * 86_400}s` } },
        { id: "delete-untagged-after-7d", action: "DELETE", condition: { tagState: "UNTAGGED", olderThan: "604800s" } },
        { id: "keep-recent", action: "KEEP", mostRecentVersions: { keepCount: KEEP_NEWEST_VERSIONS } },
        { id: "keep-build-cache", action: "KEEP", condition: { tagState: "TAGGED", tagPrefixes: [BUILD_CACHE_TAG] } },
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
      cacheFrom: [{ registry: { ref: pulumi.interpolate`${imageName}:${BUILD_CACHE_TAG}` } }],
      cacheTo: [{ registry: { ref: pulumi.interpolate`${imageName}:${BUILD_CACHE_TAG}`, imageManifest: true, ociMediaTypes: true } }],
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
