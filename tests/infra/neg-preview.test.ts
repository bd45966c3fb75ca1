import { beforeAll, describe, expect, it } from "vitest";
import { input, resourceNamed, runFixtureStack, type FixtureStack } from "./helpers/fixture-stack";
import { resourceTypes as T } from "./helpers/stack-contract";

// `pulumi preview` of a stack that gains a zone (us-central1-f) and a region (us-east1) whose NEGs GKE has
// not created yet: the preview must not wait for them, nor fail.
let stack: FixtureStack;
beforeAll(async () => {
  stack = await runFixtureStack({
    project: "infra-test-negs",
    regions: [
      { name: "us-central1", zones: ["us-central1-a", "us-central1-f"] },
      { name: "us-east1", zones: ["us-east1-c"] },
    ],
    // Minutes: a preview that waited would time the test out.
    loadBalancer: { negWait: { timeoutSeconds: 600, settleSeconds: 300, pollIntervalSeconds: 15 } },
  }, { stack: "dev", preview: true, negAvailability: (zone) => zone === "us-central1-a" });
});

describe("`pulumi preview` while NEGs are missing", () => {
  it("looks each NEG up once and previews the backends that exist", () => {
    const lookups = stack.calls.filter((call) => call.token === T.negLookup);
    expect(lookups).toHaveLength(3 * 2);
    const backends = input(resourceNamed(stack, T.backendService, "inference-dev-lb-http"), "backends") as { group: string }[];
    expect(backends.map((backend) => backend.group)).toEqual([
      "https://www.googleapis.com/compute/v1/projects/infra-test-negs/zones/us-central1-a/networkEndpointGroups/us-central1-cluster-http",
    ]);
    expect(stack.outputs.clusters["us-east1"]).toMatchObject({ servingZones: [], zonesWithoutNeg: ["us-east1-c"] });
  });
});
