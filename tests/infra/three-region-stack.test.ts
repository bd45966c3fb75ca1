import { describe, expect, it } from "vitest";
import { input, resourceNamed, resourcesOfType } from "./helpers/fixture-stack";
import { describeStackContract, resourceTypes as T } from "./helpers/stack-contract";

const PREBUILT_IMAGE = "us-docker.pkg.dev/ci-project/images/inference-server@sha256:1111111111111111111111111111111111111111111111111111111111111111";

// A production stack like Pulumi.prod.yaml: three regions, a domain (HTTPS + gRPC), an image built by CI.
const getStack = describeStackContract({
  stack: "prod",
  grafanaAdminPassword: "correct-horse-battery-staple",
  raw: {
    project: "infra-test-prod",
    environment: "prod",
    domain: "infer.example.com",
    gpusPerNode: 2,
    image: { reference: PREBUILT_IMAGE },
    regions: [
      { name: "us-central1", zones: ["us-central1-a", "us-central1-b", "us-central1-f"], gpuPool: { machineType: "n1-standard-16", minNodes: 2, maxNodes: 3 } },
      { name: "us-east1", zones: ["us-east1-c", "us-east1-d"], gpuPool: { minNodes: 1, maxNodes: 3 } },
      { name: "europe-west4", zones: ["europe-west4-b", "europe-west4-c"], gpuPool: { minNodes: 1, maxNodes: 3 } },
    ],
    autoscaling: { minReplicas: 2, maxReplicas: 6, queueDurationUsPerRequest: 5000 },
    loadBalancer: { maxRatePerEndpoint: 150 },
  },
});

describe("three-region production stack", () => {
  it("serves HTTPS with a managed certificate for the domain and redirects HTTP to it", () => {
    const stack = getStack();
    const [certificate, ...more] = resourcesOfType(stack, T.certificate);
    expect(more).toEqual([]);
    expect(certificate?.inputs).toMatchObject({ managed: { domains: ["infer.example.com"] } });
    expect(resourceNamed(stack, "gcp:compute/targetHttpsProxy:TargetHttpsProxy", "inference-prod-lb-https-proxy").inputs).toMatchObject({
      urlMap: "inference-prod-lb-routes-id", sslCertificates: ["inference-prod-lb-certificate-id"],
    });
    expect(resourcesOfType(stack, T.forwardingRule).map((rule) => rule.inputs["portRange"]).sort()).toEqual(["443", "80"]);
    expect(resourceNamed(stack, T.urlMap, "inference-prod-lb-https-redirect").inputs).toMatchObject({
      defaultUrlRedirect: { httpsRedirect: true, stripQuery: false },
    });
    expect(resourceNamed(stack, "gcp:compute/targetHttpProxy:TargetHttpProxy", "inference-prod-lb-http-proxy").inputs["urlMap"]).toBe("inference-prod-lb-https-redirect-id");
    expect(stack.outputs.url).toBe("https://infer.example.com");
    expect(stack.outputs.grpcEndpoint).toBe("infer.example.com:443");
  });

  it("deploys a prebuilt image by reference without building one", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, "docker-build:index:Image")).toEqual([]);
    expect(stack.outputs.image).toBe(PREBUILT_IMAGE);
  });

  it("gives every region's Grafana the configured admin password from a Kubernetes secret", () => {
    const stack = getStack();
    for (const region of stack.config.regions) {
      const secret = resourceNamed(stack, "kubernetes:core/v1:Secret", `${region.name}-grafana-admin`);
      expect(input(secret, "stringData", "admin-password")).toBe("correct-horse-battery-staple");
      expect(input(resourceNamed(stack, T.release, `${region.name}-kube-prometheus-stack`), "values", "grafana", "admin"))
        .toEqual({ existingSecret: "grafana-admin", userKey: "admin-user", passwordKey: "admin-password" });
    }
  });

  it("protects production: clusters cannot be deleted and the bucket is not force-destroyed", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, T.cluster).map((cluster) => cluster.inputs["deletionProtection"])).toEqual([true, true, true]);
    expect(resourceNamed(stack, "gcp:storage/bucket:Bucket", "inference-prod-models-bucket").inputs["forceDestroy"]).toBe(false);
  });

  it("gives each region its own address ranges", () => {
    const stack = getStack();
    const subnets = resourcesOfType(stack, "gcp:compute/subnetwork:Subnetwork");
    const ranges = subnets.flatMap((subnet) => [subnet.inputs["ipCidrRange"], ...(subnet.inputs["secondaryIpRanges"] as { ipCidrRange: string }[]).map((range) => range.ipCidrRange)]);
    expect(subnets).toHaveLength(3);
    expect(new Set(ranges).size).toBe(9);
  });
});
