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

/** Where {@link ServerImage} pushes the image. */
export interface ImageRegistry {
  readonly location: string;
  readonly suffix: string;
}

/** Arguments of {@link ServerImage}. */
export interface ServerImageArgs {
  readonly project: string;
  /** Artifact Registry repository id (the same in every location). */
  readonly repositoryId: string;
  /**
   * One repository per entry, at `location` (a region or multi-region such as `us`), its resources' names ending
   * in `suffix`; the build cache lives in the first.
   */
  readonly registries: readonly ImageRegistry[];
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
 * The inference server's CUDA image: one Artifact Registry repository per registry location, each readable by
 * the nodes and cleaned up alike, and the image built once from server/Dockerfile.cuda and pushed to every one
 * of them. `imageReferences` (one per registry, in order) are digest-qualified, so a Deployment changes exactly
 * when the image's content does, whatever the tag.
 */
export class ServerImage extends pulumi.ComponentResource {
  readonly imageReferences: readonly pulumi.Output<string>[];

  constructor(name: string, args: ServerImageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:ServerImage", name, {}, opts);
    const repositories = args.registries.map((registry) => this.repository(name, args, registry));
    const imageNames = repositories.map((repository, index) =>
      pulumi.interpolate`${args.registries[index]!.location}-docker.pkg.dev/${args.project}/${repository.repositoryId}/inference-server`);
    const cacheRef = pulumi.interpolate`${imageNames[0]!}:${BUILD_CACHE_TAG}`;
    const accessToken = gcp.organizations.getClientConfigOutput({ parent: this }).accessToken;
    const image = new dockerBuild.Image(`${name}-cuda`, {
      context: { location: args.contextDir },
      dockerfile: { location: path.join(args.contextDir, args.dockerfile) },
      platforms: ["linux/amd64"],
      tags: imageNames.map((imageName) => pulumi.interpolate`${imageName}:${args.tag}`),
      push: true,
      // A CUDA image build is minutes of work; previews in pull requests check the program, not the image.
      buildOnPreview: false,
      cacheFrom: [{ registry: { ref: cacheRef } }],
      cacheTo: [{ registry: { ref: cacheRef, imageManifest: true, ociMediaTypes: true } }],
      registries: args.registries.map((registry) => ({
        address: `${registry.location}-docker.pkg.dev`,
        username: "oauth2accesstoken",
        password: accessToken,
      })),
    }, { parent: this, dependsOn: repositories });
    // `ref` names the first tag; the others carry the same digest.
    this.imageReferences = imageNames.map((imageName, index) => (index === 0 ? image.ref : pulumi.interpolate`${imageName}:${args.tag}@${image.digest}`));
    this.registerOutputs({ imageReferences: this.imageReferences });
  }

  private repository(name: string, args: ServerImageArgs, registry: ImageRegistry): gcp.artifactregistry.Repository {
    const repository = new gcp.artifactregistry.Repository(`${name}-repository${registry.suffix}`, {
      project: args.project,
      location: registry.location,
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
    new gcp.artifactregistry.RepositoryIamMember(`${name}-nodes-reader${registry.suffix}`, {
      project: args.project,
      location: registry.location,
      repository: repository.repositoryId,
      role: "roles/artifactregistry.reader",
      member: pulumi.interpolate`serviceAccount:${args.nodeServiceAccountEmail}`,
    }, { parent: this });
    return repository;
  }
}
