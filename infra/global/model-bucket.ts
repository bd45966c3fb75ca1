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
    const serverReader = new gcp.storage.BucketIAMMember(`${name}-server-reader`, {
      bucket: bucket.name,
      role: "roles/storage.objectViewer",
      member: pulumi.interpolate`serviceAccount:${args.readerServiceAccountEmail}`,
    }, { parent: this });
    const objects = args.files.map((file) =>
      new gcp.storage.BucketObject(`${name}-object-${file.objectName}`, {
        bucket: bucket.name,
        name: file.objectName,
        ...(file.content === undefined
          ? { source: new pulumi.asset.FileAsset(file.localPath) }
          : { content: file.content, contentType: "text/plain" }),
      }, { parent: this }));
    // The name the pods mount resolves only once the server's account may read the bucket and every model file is
    // in it: a pod that mounted it earlier would fail its Cloud Storage FUSE mount (403) or miss models, and the
    // Deployment (which takes this name as an input) would then wait out its 30 minutes.
    this.bucketName = pulumi.all([serverReader.id, ...objects.map((object) => object.id)]).apply(() => bucket.name);
    this.registerOutputs({ bucketName: this.bucketName });
  }
}
