import { describe, expect, it } from "vitest";
import path from "node:path";
import { imageContentTag } from "../../infra/global";
import { input, resourceNamed, resourcesOfType } from "./helpers/fixture-stack";

const REPOSITORY_ROOT = path.resolve(__dirname, "..", "..");
import { describeStackContract, resourceTypes as T } from "./helpers/stack-contract";

// A dev stack like Pulumi.dev.yaml: two regions, spot T4s, no domain, the image built by Pulumi.
const getStack = describeStackContract({
  stack: "dev",
  raw: {
    project: "infra-test-dev",
    environment: "dev",
    regions: [
      { name: "us-central1", zones: ["us-central1-a", "us-central1-b"], gpuPool: { minNodes: 1, maxNodes: 3, spot: true } },
      { name: "us-east1", zones: ["us-east1-c", "us-east1-d"], gpuPool: { minNodes: 0, maxNodes: 3 } },
    ],
    autoscaling: { minReplicas: 1, maxReplicas: 2 },
  },
});

describe("two-region dev stack", () => {
  it("serves plain HTTP on port 80 and asks for no certificate without a domain", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, T.certificate)).toEqual([]);
    const rules = resourcesOfType(stack, T.forwardingRule);
    expect(rules.map((rule) => rule.inputs["portRange"])).toEqual(["80"]);
    expect(resourceNamed(stack, "gcp:compute/targetHttpProxy:TargetHttpProxy", "inference-dev-lb-http-proxy").inputs["urlMap"]).toBe("inference-dev-lb-routes-id");
    expect(stack.outputs.url).toBe("http://203.0.113.10");
    expect(stack.outputs.grpcEndpoint).toMatch(/needs HTTPS/);
  });

  it("builds the CUDA image from the repository and lets the nodes, only, pull it", () => {
    const stack = getStack();
    const image = resourceNamed(stack, "docker-build:index:Image", "inference-dev-image-cuda");
    expect(image.inputs).toMatchObject({
      context: { location: "." },
      dockerfile: { location: "server/Dockerfile.cuda" },
      platforms: ["linux/amd64"],
      push: true,
      tags: [`us-docker.pkg.dev/infra-test-dev/inference-dev/inference-server:${imageContentTag(REPOSITORY_ROOT, "server/Dockerfile.cuda")}`],
    });
    expect(String((image.inputs["tags"] as string[])[0])).toMatch(/:src-[0-9a-f]{16}$/);
    // Tagged images expire after 30 days, except the 10 newest and the build cache; untagged ones after 7.
    expect(resourceNamed(stack, "gcp:artifactregistry/repository:Repository", "inference-dev-image-repository").inputs["cleanupPolicies"]).toEqual([
      { id: "delete-tagged-after-30d", action: "DELETE", condition: { tagState: "TAGGED", olderThan: "2592000s" } },
      { id: "delete-untagged-after-7d", action: "DELETE", condition: { tagState: "UNTAGGED", olderThan: "604800s" } },
      { id: "keep-recent", action: "KEEP", mostRecentVersions: { keepCount: 10 } },
      { id: "keep-build-cache", action: "KEEP", condition: { tagState: "TAGGED", tagPrefixes: ["buildcache"] } },
    ]);
    expect(stack.outputs.image).toMatch(/^us-docker\.pkg\.dev\/infra-test-dev\/inference-dev\/inference-server@sha256:/);
    const reader = resourceNamed(stack, "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "inference-dev-image-nodes-reader");
    expect(reader.inputs).toMatchObject({ role: "roles/artifactregistry.reader", member: "serviceAccount:inference-dev-nodes@infra-test-dev.iam.gserviceaccount.com" });
  });

  it("lets Grafana generate its admin password in-cluster when the stack sets none", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, "kubernetes:core/v1:Secret").filter((secret) => secret.name.endsWith("-grafana-admin"))).toEqual([]);
    expect(input(resourceNamed(stack, T.release, "us-east1-kube-prometheus-stack"), "values", "grafana", "adminPassword")).toBe("");
  });

  it("runs no load test unless the stack asks for one", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, "kubernetes:batch/v1:Job")).toEqual([]);
  });

  it("keeps alerts without a receiver when the stack sets no alertmanagerConfig (and says so)", () => {
    const stack = getStack();
    expect(input(resourceNamed(stack, T.release, "us-east1-kube-prometheus-stack"), "values", "alertmanager")).toBeUndefined();
    expect(input(resourceNamed(stack, T.release, "us-east1-kube-prometheus-stack"), "values", "crds")).toEqual({ enabled: true, upgradeJob: { enabled: true } });
  });

  it("keeps logging costs down: 10% of load balancer requests and VPC flows, no per-probe firewall logs", () => {
    const stack = getStack();
    expect(input(resourceNamed(stack, T.backendService, "inference-dev-lb-http"), "logConfig")).toEqual({ enable: true, sampleRate: 0.1 });
    expect(input(resourceNamed(stack, T.firewall, "inference-dev-vpc-allow-load-balancer"), "logConfig")).toBeUndefined();
    expect(input(resourceNamed(stack, "gcp:compute/subnetwork:Subnetwork", "us-east1-subnet"), "logConfig", "flowSampling")).toBe(0.1);
  });

  it("keeps dev stacks destroyable: no deletion protection, and the bucket may be deleted with its objects", () => {
    const stack = getStack();
    for (const cluster of resourcesOfType(stack, T.cluster)) expect(cluster.inputs).toMatchObject({ deletionProtection: false, deletionPolicy: "DELETE" });
    expect(resourceNamed(stack, "gcp:storage/bucket:Bucket", "inference-dev-models-bucket").inputs).toMatchObject({
      name: "infra-test-dev-dev-models", forceDestroy: true, uniformBucketLevelAccess: true, publicAccessPrevention: "enforced",
    });
  });

  it("grants the server's identity read access to the models and binds it to the pods' Kubernetes service account", () => {
    const stack = getStack();
    expect(resourceNamed(stack, "gcp:storage/bucketIAMMember:BucketIAMMember", "inference-dev-models-server-reader").inputs).toMatchObject({
      role: "roles/storage.objectViewer", member: "serviceAccount:inference-dev-server@infra-test-dev.iam.gserviceaccount.com",
    });
    expect(resourceNamed(stack, "gcp:serviceaccount/iAMMember:IAMMember", "inference-dev-us-east1-server-identity-workload-identity-user").inputs).toMatchObject({
      role: "roles/iam.workloadIdentityUser", member: "serviceAccount:infra-test-dev.svc.id.goog[inference/inference-server-us-east1]",
    });
    expect(resourceNamed(stack, "gcp:projects/iAMMember:IAMMember", "inference-dev-accounts-nodes-default-node-role").inputs["role"])
      .toBe("roles/container.defaultNodeServiceAccount");
  });
});
