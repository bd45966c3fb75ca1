import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planStack } from "../../infra/plan/plan";
import { readStackFile, SECRET_PLACEHOLDER } from "../../infra/plan/stack-file";
import { FIXTURE_DASHBOARDS_DIR, FIXTURE_MODEL_REPOSITORY_DIR } from "./helpers/fixture-stack";

const REPOSITORY_ROOT = path.resolve(__dirname, "..", "..");

// A project folder like the repository's, with the real Pulumi.yaml and stack files but the fixture
// dashboards and model repository (the real models/ is generated and large).
let projectRoot: string;
let plan: string;
let prodPlan: string;

beforeAll(async () => {
  projectRoot = fs.mkdtempSync(path.join(os.tmpdir(), "infra-plan-"));
  for (const file of ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"]) fs.copyFileSync(path.join(REPOSITORY_ROOT, file), path.join(projectRoot, file));
  fs.cpSync(FIXTURE_DASHBOARDS_DIR, path.join(projectRoot, "dashboards"), { recursive: true });
  fs.cpSync(FIXTURE_MODEL_REPOSITORY_DIR, path.join(projectRoot, "models"), { recursive: true });
  // The image's tag hashes its Dockerfile (and whatever else of the build context is there).
  fs.mkdirSync(path.join(projectRoot, "server"));
  fs.copyFileSync(path.join(REPOSITORY_ROOT, "server", "Dockerfile.cuda"), path.join(projectRoot, "server", "Dockerfile.cuda"));
  plan = await planStack({ projectRoot, stack: "dev" });
  prodPlan = await planStack({ projectRoot, stack: "prod" });
});

afterAll(() => {
  fs.rmSync(projectRoot, { recursive: true, force: true });
});

describe("planStack (npm run plan)", () => {
  it("prints the dev stack's resource tree with each region's cluster, T4 pool and workload", () => {
    expect(plan).toMatch(/^Plan for stack 'dev' of project 'gpu-inference'/);
    for (const region of ["us-central1", "us-east1"]) {
      expect(plan).toContain(`+ gpu-inference:region:Region  ${region}\n`);
      expect(plan).toMatch(new RegExp(`\\+ gcp:container/cluster:Cluster  ${region}-cluster  \\(location=${region} .*privateNodes=true .*dnsEndpoint=true`));
      expect(plan).toMatch(new RegExp(`\\+ gcp:container/nodePool:NodePool  ${region}-gpu  \\(machine=n1-standard-4 gpu=1xnvidia-tesla-t4\\(driver LATEST\\) taints=nvidia.com/gpu=present:NO_SCHEDULE`));
      expect(plan).toMatch(new RegExp(`\\+ kubernetes:apps/v1:Deployment  ${region}-deployment  \\(image=.*@sha256:\\w+ gpu=1\\)`));
    }
    expect(plan).toMatch(/\+ gcp:compute\/backendService:BackendService {2}inference-dev-lb-grpc {2}\(protocol=H2C scheme=EXTERNAL_MANAGED negs=4 balancing=RATE/);
    expect(plan).toContain("gcp:compute/getNetworkEndpointGroup:getNetworkEndpointGroup x8");
    // The URL map's refusals are shown as refused, not among the routes it forwards.
    expect(plan).toMatch(/uRLMap:URLMap {2}inference-dev-lb-routes {2}\(routes=\/v2,\/v2\/health\/live,.* refused=\/v2\/models\/stats\)/);
    expect(plan).not.toMatch(/routes=\/v2\/models\/stats/);
  });

  it("nests every resource under its component and counts resources per region and globally", () => {
    expect(plan).toMatch(/\n {4}\+ gcp:container\/cluster:Cluster {2}us-east1-cluster/);
    const counts = Object.fromEntries([...plan.matchAll(/^ {2}(global|region \S+|total)\s+(\d+) resources/gm)].map((match) => [match[1], Number(match[2])]));
    expect(Object.keys(counts)).toEqual(["global", "region us-central1", "region us-east1", "total"]);
    expect(counts["region us-central1"]).toBe(counts["region us-east1"]);
    expect(counts["total"]).toBe((counts["global"] ?? 0) + (counts["region us-central1"] ?? 0) + (counts["region us-east1"] ?? 0));
    const treeLines = plan.split("\n\nData-source lookups:")[0]?.split("\n").filter((line) => /^\s*\+ /.test(line)) ?? [];
    expect(treeLines).toHaveLength((counts["total"] ?? 0) + 1);
  });

  it("estimates what the stack costs per hour and per month at its smallest and largest scale", () => {
    const section = plan.slice(plan.indexOf("Cost estimate"), plan.indexOf("\nOutputs:"));
    expect(section).toMatch(/^Cost estimate \(USD list prices for us-central1 as of \d{4}-\d{2}-\d{2}/);
    for (const region of ["us-central1", "us-east1"]) {
      expect(section).toMatch(new RegExp(`${region} +GPU nodes: 1-3 x n1-standard-4 \\+ 1 T4, spot +\\$\\d+\\.\\d\\d/h +\\$\\d+\\.\\d\\d/h`));
      expect(section).toMatch(new RegExp(`${region} +GKE cluster management fee \\(regional cluster\\) +\\$0\\.10/h +\\$0\\.10/h`));
    }
    expect(section).toMatch(/total per month +\$[\d,]+\/month +\$[\d,]+\/month/);
  });

  it("prints the Compute Engine quotas the stack needs per region and project-wide, at min and max scale, refusing nothing", () => {
    const section = plan.slice(plan.indexOf("\nQuotas ("), plan.indexOf("\nOutputs:"));
    expect(section).toMatch(/\n {2}us-east1 +PREEMPTIBLE_NVIDIA_T4_GPUS +1 +3 +4\n/);
    expect(section).toMatch(/\n {2}global +CPUS_ALL_REGIONS +\d+ +\d+ +\d+\n/);
    expect(section).toContain("SSD_TOTAL_GB");
  });

  it("ends with the stack outputs", () => {
    const outputs = JSON.parse(plan.slice(plan.indexOf("Outputs:\n") + "Outputs:\n".length)) as Record<string, unknown>;
    expect(outputs).toMatchObject({ url: "http://203.0.113.10", modelBucket: "my-inference-dev-dev-models" });
    expect(Object.keys(outputs["clusters"] as object)).toEqual(["us-central1", "us-east1"]);
  });
});

describe("planStack for the prod example (us-central1, us-east1, europe-west4)", () => {
  it("builds the image once, pushes it to a repository in us and in europe, and keeps a bucket in US and in EU", () => {
    expect(prodPlan).toMatch(/\+ gcp:artifactregistry\/repository:Repository {2}inference-prod-image-repository {2}\(id=inference-prod location=us cleanup=/);
    expect(prodPlan).toMatch(/\+ gcp:artifactregistry\/repository:Repository {2}inference-prod-image-repository-europe {2}\(id=inference-prod location=europe cleanup=/);
    expect(prodPlan).toMatch(/\+ docker-build:index:Image {2}inference-prod-image-cuda {2}\(tags=us-docker\.pkg\.dev\/\S+:src-\w+,europe-docker\.pkg\.dev\/\S+:src-\w+ /);
    expect(prodPlan).toContain("\n  + gpu-inference:global:ModelBucket  inference-prod-models-europe\n");
    expect(prodPlan).toContain("+ gcp:storage/bucket:Bucket  inference-prod-models-bucket  (name=my-inference-prod-prod-models location=US)");
    expect(prodPlan).toContain("+ gcp:storage/bucket:Bucket  inference-prod-models-europe-bucket  (name=my-inference-prod-prod-models-europe location=EU)");
  });

  it("runs europe-west4 on the European copy of the image and says every region stays on its continent", () => {
    expect(prodPlan).toMatch(/\+ kubernetes:apps\/v1:Deployment {2}europe-west4-deployment {2}\(image=europe-docker\.pkg\.dev\/\S+@sha256:\w+ gpu=1\)/);
    expect(prodPlan).toMatch(/\+ kubernetes:apps\/v1:Deployment {2}us-east1-deployment {2}\(image=us-docker\.pkg\.dev\/\S+@sha256:\w+ gpu=1\)/);
    expect(prodPlan).toContain("Note: one image repository and model bucket per continent (us/US: us-central1, us-east1; europe/EU: europe-west4)");
    expect(prodPlan).not.toMatch(/inter-continental egress/);
  });
});

describe("readStackFile", () => {
  it("passes structured values as JSON, namespaces bare keys and keeps encrypted values secret", () => {
    fs.writeFileSync(path.join(projectRoot, "Pulumi.secret.yaml"), [
      "config:",
      "  gcp:project: p-123456",
      "  environment: prod",
      "  gpu-inference:gpusPerNode: 2",
      "  gpu-inference:regions:",
      "    - { name: us-east1, zones: [us-east1-c] }",
      "  gpu-inference:grafanaAdminPassword:",
      "    secure: v1:AAAABBBBCCCC",
    ].join("\n"));
    expect(readStackFile(projectRoot, "secret")).toEqual({
      project: "gpu-inference",
      config: {
        "gcp:project": "p-123456",
        "gpu-inference:environment": "prod",
        "gpu-inference:gpusPerNode": "2",
        "gpu-inference:regions": JSON.stringify([{ name: "us-east1", zones: ["us-east1-c"] }]),
        "gpu-inference:grafanaAdminPassword": SECRET_PLACEHOLDER,
      },
      secretKeys: ["gpu-inference:grafanaAdminPassword"],
    });
  });

  it("names the stack file that is missing", () => {
    expect(() => readStackFile(projectRoot, "nope")).toThrow(`${path.join(projectRoot, "Pulumi.nope.yaml")} does not exist`);
  });
});
