import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { ModelBucket } from "../../infra/global/model-bucket";

// Pulumi's runtime is process-global: this file's own mocks hold the bucket's read grant back until the test
// releases it, to see what waits for it.
const GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember";
let releaseGrant: () => void = () => undefined;
const grantReleased = new Promise<void>((resolve) => {
  releaseGrant = resolve;
});

beforeAll(async () => {
  await pulumi.runtime.setMocks({
    newResource: async (args: pulumi.runtime.MockResourceArgs) => {
      if (args.type === GRANT) await grantReleased;
      return { id: `${args.name}-id`, state: args.inputs };
    },
    call: (args: pulumi.runtime.MockCallArgs) => args.inputs,
  }, "gpu-inference", "model-bucket-test", false);
});

describe("ModelBucket (issue 39, item 7)", () => {
  it("gives the pods its name only once the server's account may read it, so no pod mounts it before (FUSE 403)", async () => {
    const bucket = new ModelBucket("models", {
      project: "p", bucketName: "p-dev-models", location: "US", files: [], readerServiceAccountEmail: "server@p.iam.gserviceaccount.com", forceDestroy: true, protect: false,
    });
    let mounted: string | undefined;
    const name = new Promise<string>((resolve) => bucket.bucketName.apply((value) => {
      mounted = value;
      resolve(value);
    }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mounted).toBeUndefined();
    releaseGrant();
    expect(await name).toBe("p-dev-models");
  });
});
