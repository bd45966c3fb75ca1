import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";
import { deletionPolicy } from "../deletion-policy";
import { type ModelRepositoryFile } from "./model-repository-files";

/** Arguments of {@link ModelBucket}. */
export interface ModelBucketArgs {
  readonly project: string;
  readonly bucketName: string;
  readonly location: string;
  /** The repository's files (see listModelRepositoryFiles). */
  readonly files: readonly ModelRepositoryFile[];
  /** The only identity that may read the models: the server's Workload Identity account. */
  readonly readerServiceAccountEmail: pulumi.Input<string>;
  /** Let `pulumi destroy` delete a bucket that still holds objects (not for production). */
  readonly forceDestroy: boolean;
  /** Refuse deletion (production). */
  readonly protect: boolean;
}

/** Replaced or deleted model files stay recoverable this long, then go (so versions never pile up). */
const NONCURRENT_VERSION_DAYS = 30;

/**
 * The model repository one continent's pods mount read-only (Cloud Storage FUSE), private and versioned,
 * holding the example models as uploaded from the local repository. Old versions expire after
 * {@link NONCURRENT_VERSION_DAYS} days, so an emptied bucket can be deleted without a version hunt.
 */
export class ModelBucket extends pulumi.ComponentResource {
  readonly bucketName: pulumi.Output<string>;

  constructor(name: string, args: ModelBucketArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:ModelBucket", name, {}, opts);
    const bucket = new gcp.storage.Bucket(`${name}-bucket`, {
      project: args.project,
      name: args.bucketName,
      location: args.location,
      uniformBucketLevelAccess: true,
      publicAccessPrevention: "enforced",
      versioning: { enabled: true },
      lifecycleRules: [{ action: { type: "Delete" }, condition: { daysSinceNoncurrentTime: NONCURRENT_VERSION_DAYS, withState: "ARCHIVED" } }],
      forceDestroy: args.forceDestroy,
      ...deletionPolicy(args.protect),
    }, { parent: this });
    new gcp.storage.BucketIAMMember(`${name}-server-reader`, {
      bucket: bucket.name,
      role: "roles/storage.objectViewer",
      member: pulumi.interpolate`serviceAccount:${args.readerServiceAccountEmail}`,
    }, { parent: this });
    for (const file of args.files) {
      new gcp.storage.BucketObject(`${name}-object-${file.objectName}`, {
        bucket: bucket.name,
        name: file.objectName,
        ...(file.content === undefined
          ? { source: new pulumi.asset.FileAsset(file.localPath) }
          : { content: file.content, contentType: "text/plain" }),
      }, { parent: this });
    }
    this.bucketName = bucket.name;
    this.registerOutputs({ bucketName: this.bucketName });
  }
}
