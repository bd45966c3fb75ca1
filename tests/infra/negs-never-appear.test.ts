import { describe, expect, it } from "vitest";
import { runFixtureStack } from "./helpers/fixture-stack";

describe("a `pulumi up` where GKE never creates the NEGs", () => {
  it("fails after the timeout, naming each zone, the NEGs and the Service, and what to check", async () => {
    const startedAt = Date.now();
    const run = runFixtureStack({
      project: "infra-test-negs",
      regions: [{ name: "us-central1", zones: ["us-central1-a", "us-central1-f"] }],
      loadBalancer: { negWait: { timeoutSeconds: 0.5, settleSeconds: 0.1, pollIntervalSeconds: 0.05 } },
    }, { stack: "dev", negAvailability: () => false });
    await expect(run).rejects.toThrow(
      "no standalone NEG appeared in any region, so the load balancer would have no backend: region us-central1: "
      + "Service inference/inference-server has no NEG us-central1-cluster-http / us-central1-cluster-grpc in zones us-central1-a, us-central1-f. "
      + "GKE creates a Service's NEGs in the zones where its pods run",
    );
    await expect(run).rejects.toThrow("kubectl -n inference get svcneg");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(500);
  });
});
