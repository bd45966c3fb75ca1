import { beforeAll, describe, expect, it } from "vitest";
import { input, resourceNamed, runFixtureStack, type FixtureStack } from "./helpers/fixture-stack";
import { resourceTypes as T } from "./helpers/stack-contract";

// GKE's NEG controller creates a Service's NEGs some time after the Service exists, and only where it has
// endpoints. Three regions, three behaviours of the (mocked) Compute API:
// - us-central1: both zones' NEGs are "not found" for the first 3 lookups each, then appear;
// - us-east1: zone c has its NEGs at once, zone d never gets any (no GPU node there);
// - europe-west4: no NEG ever appears (a T4 stockout keeps the region's pods pending).
const LATE_LOOKUPS = 3;
const negWait = { timeoutSeconds: 1, settleSeconds: 0.2, pollIntervalSeconds: 0.02 };

let stack: FixtureStack;
beforeAll(async () => {
  stack = await runFixtureStack({
    project: "infra-test-negs",
    regions: [
      { name: "us-central1", zones: ["us-central1-a", "us-central1-b"] },
      { name: "us-east1", zones: ["us-east1-c", "us-east1-d"] },
      { name: "europe-west4", zones: ["europe-west4-b", "europe-west4-c"] },
    ],
    loadBalancer: { negWait },
  }, {
    stack: "dev",
    negAvailability: (zone, _name, attempt) => {
      if (zone.startsWith("us-central1-")) return attempt > LATE_LOOKUPS;
      return zone === "us-east1-c";
    },
  });
});

const selfLink = (zone: string, name: string) => `https://www.googleapis.com/compute/v1/projects/infra-test-negs/zones/${zone}/networkEndpointGroups/${name}`;
const lookupsOf = (zone: string) => stack.calls.filter((call) => call.token === T.negLookup && call.inputs["zone"] === zone);

describe("a first `pulumi up` while GKE creates the NEGs", () => {
  it("keeps looking for NEGs that are not there yet and attaches them once they appear", () => {
    for (const zone of ["us-central1-a", "us-central1-b"]) {
      expect(lookupsOf(zone)).toHaveLength(2 * (LATE_LOOKUPS + 1));
    }
    expect(stack.outputs.clusters["us-central1"]).toMatchObject({ servingZones: ["us-central1-a", "us-central1-b"], zonesWithoutNeg: [] });
  });

  it("attaches the zones that have NEGs, after giving the others the settle time, and reports the rest", () => {
    expect(stack.outputs.clusters["us-east1"]).toMatchObject({ servingZones: ["us-east1-c"], zonesWithoutNeg: ["us-east1-d"] });
    // Looked at more than once: the zone had `settleSeconds` to catch up, no more.
    expect(lookupsOf("us-east1-d").length).toBeGreaterThan(2);
  });

  it("does not let a region whose NEGs never appear hold the load balancer back", () => {
    expect(stack.outputs.clusters["europe-west4"]).toMatchObject({ servingZones: [], zonesWithoutNeg: ["europe-west4-b", "europe-west4-c"] });
    for (const [kind, port] of [["http", "http"], ["grpc", "grpc"]] as const) {
      const backends = input(resourceNamed(stack, T.backendService, `inference-dev-lb-${kind}`), "backends") as { group: string }[];
      expect(backends.map((backend) => backend.group).sort()).toEqual([
        selfLink("us-central1-a", `us-central1-cluster-${port}`),
        selfLink("us-central1-b", `us-central1-cluster-${port}`),
        selfLink("us-east1-c", `us-east1-cluster-${port}`),
      ].sort());
    }
  });

  it("gives up on a region after the configured timeout, not before", () => {
    const lookups = lookupsOf("europe-west4-b").length / 2;
    // Polled every 20 ms for 1 s: dozens of lookups, bounded by the timeout.
    expect(lookups).toBeGreaterThan(5);
    expect(lookups).toBeLessThanOrEqual(negWait.timeoutSeconds / negWait.pollIntervalSeconds + 1);
  });
});
