import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../infra/config";
import { readStackFile } from "../../infra/plan/stack-file";
import { parseStackConfig, StackConfigError, type RawStackConfig } from "../../infra/stack-config";

const context = { stack: "dev", namespace: "gpu-inference" };

function problemsOf(raw: unknown): string[] {
  try {
    parseStackConfig(raw, context);
  } catch (error) {
    if (error instanceof StackConfigError) return [...error.problems];
    throw error;
  }
  throw new Error("the configuration was accepted");
}

const oneRegion = (region: Partial<NonNullable<RawStackConfig["regions"]>[number]> = {}): RawStackConfig => ({
  project: "my-project-1",
  regions: [{ name: "us-central1", zones: ["us-central1-a", "us-central1-b"], ...region }],
});

describe("parseStackConfig", () => {
  it("fills every default from the GCP project alone", () => {
    const config = parseStackConfig({ project: "my-project-1" }, context);
    expect(config).toMatchObject({
      environment: "dev",
      namePrefix: "inference-dev",
      gpusPerNode: 1,
      cluster: { releaseChannel: "REGULAR", deletionProtection: false },
      protectResources: false,
      image: {},
      modelRepository: { sourceDir: "models" },
      continents: [{ name: "us", suffix: "", registryLocation: "us", bucketName: "my-project-1-dev-models", bucketLocation: "US", regions: ["us-central1"] }],
      autoscaling: { minReplicas: 1, maxReplicas: 2, gpuUtilizationPercent: 85, scaleDownStabilizationSeconds: 360 },
      loadBalancer: { logSampleRate: 0.1, negWait: { timeoutSeconds: 900, settleSeconds: 120, pollIntervalSeconds: 15 }, waf: { sensitivity: 1, preview: true } },
      vpc: { flowLogSampleRate: 0.1, firewallLogging: false },
      loadTest: { enabled: false, model: "resnet50", protocol: "http", mode: "concurrency", range: "1:8:1" },
    });
    expect(config.regions).toEqual([expect.objectContaining({
      name: "us-central1",
      zones: ["us-central1-a", "us-central1-b"],
      gpuPool: { machineType: "n1-standard-4", minNodes: 1, maxNodes: 3, spot: false, locationPolicy: "ANY" },
      systemPool: { machineType: "e2-standard-4", minNodes: 1, maxNodes: 3 },
    })]);
  });

  it("protects production: deletion protection, PREVENT on stateful resources, GPU nodes balanced over zones", () => {
    const prod = parseStackConfig({ project: "my-project-1", environment: "prod" }, context);
    expect(prod).toMatchObject({ cluster: { deletionProtection: true }, protectResources: true });
    expect(prod.regions[0]?.gpuPool.locationPolicy).toBe("BALANCED");
    expect(parseStackConfig({ project: "my-project-1", environment: "prod", protectResources: false }, context).protectResources).toBe(false);
  });

  it("keeps the image registry and the model bucket on the first region's continent", () => {
    const europe = parseStackConfig({ project: "my-project-1", regions: [{ name: "europe-west4", zones: ["europe-west4-b"] }] }, context);
    expect(europe.continents).toEqual([{ name: "europe", suffix: "", registryLocation: "europe", bucketName: "my-project-1-dev-models", bucketLocation: "EU", regions: ["europe-west4"] }]);
    const asia = parseStackConfig({ project: "my-project-1", regions: [{ name: "asia-east1", zones: ["asia-east1-a"] }], image: { registryLocation: "asia-east1" } }, context);
    expect(asia.continents).toEqual([expect.objectContaining({ registryLocation: "asia-east1", bucketLocation: "ASIA" })]);
  });

  it("gives every further continent the regions span a registry and bucket of its own, named with a suffix", () => {
    const config = parseStackConfig({
      project: "my-project-1",
      regions: [
        { name: "us-central1", zones: ["us-central1-a"] },
        { name: "europe-west4", zones: ["europe-west4-b"] },
        { name: "us-east1", zones: ["us-east1-c"] },
        { name: "australia-southeast1", zones: ["australia-southeast1-a"] },
      ],
      image: { registryLocation: "us-central1" },
      modelRepository: { bucketName: "models-x", location: "us-central1" },
    }, context);
    expect(config.continents).toEqual([
      { name: "us", suffix: "", registryLocation: "us-central1", bucketName: "models-x", bucketLocation: "us-central1", regions: ["us-central1", "us-east1"] },
      { name: "europe", suffix: "-europe", registryLocation: "europe", bucketName: "models-x-europe", bucketLocation: "EU", regions: ["europe-west4"] },
      { name: "asia", suffix: "-asia", registryLocation: "asia", bucketName: "models-x-asia", bucketLocation: "ASIA", regions: ["australia-southeast1"] },
    ]);
    expect(problemsOf({ ...oneRegion(), regions: [oneRegion().regions![0]!, { name: "europe-west4", zones: ["europe-west4-b"] }], modelRepository: { bucketName: `b${"x".repeat(56)}` } }))
      .toEqual([`gpu-inference:modelRepository.bucketName: bucket name b${"x".repeat(56)}-europe is longer than 63 characters; set a shorter one`]);
  });

  it("turns deletion protection on for prod unless the stack says otherwise", () => {
    expect(parseStackConfig({ project: "my-project-1", environment: "prod" }, context).cluster.deletionProtection).toBe(true);
    expect(parseStackConfig({ project: "my-project-1", environment: "prod", cluster: { deletionProtection: false } }, context).cluster.deletionProtection).toBe(false);
  });

  it("gives up to eight regions disjoint default address ranges", () => {
    const regions = ["us-central1", "us-east1", "us-east4", "us-west1", "europe-west1", "europe-west2", "europe-west4", "asia-east1"]
      .map((name) => ({ name, zones: [`${name}-b`] }));
    const config = parseStackConfig({ project: "my-project-1", regions }, context);
    const ranges = config.regions.flatMap((region) => Object.values(region.network));
    expect(new Set(ranges).size).toBe(32);
  });

  it("keeps explicit address ranges", () => {
    const config = parseStackConfig(oneRegion({ network: { subnetCidr: "192.168.0.0/20" } }), context);
    expect(config.regions[0]?.network).toMatchObject({ subnetCidr: "192.168.0.0/20", podsCidr: "10.64.0.0/14" });
  });

  it.each<[string, unknown, string]>([
    ["a missing GCP project", {}, "gcp:project: is required: run `pulumi config set gcp:project <project-id>`"],
    ["an unknown environment", { project: "my-project-1", environment: "qa" }, "gpu-inference:environment:"],
    ["a GPU count GCP does not offer for T4", { project: "my-project-1", gpusPerNode: 3 }, "gpu-inference:gpusPerNode:"],
    ["a non-N1 GPU machine type", oneRegion({ gpuPool: { machineType: "g2-standard-8" } }), "gpu-inference:regions[0].gpuPool.machineType: T4 GPUs attach only to N1 machine types"],
    ["a malformed zone", oneRegion({ zones: ["us-central1"] }), "gpu-inference:regions[0].zones[0]: must be a GCP zone name"],
    ["a malformed CIDR", oneRegion({ network: { podsCidr: "10.64.0.1/14" } }), "gpu-inference:regions[0].network.podsCidr: must be an IPv4 CIDR block"],
    ["a malformed domain", { project: "my-project-1", domain: "https://infer.example.com" }, "gpu-inference:domain: must be a fully qualified lower-case hostname"],
    ["no regions", { project: "my-project-1", regions: [] }, "gpu-inference:regions:"],
  ])("rejects %s, naming the key", (_case, raw, expected) => {
    expect(problemsOf(raw).join("\n")).toContain(expected);
  });

  it.each<[string, RawStackConfig, string]>([
    ["a zone outside its region", oneRegion({ zones: ["us-central1-a", "europe-west4-b"] }), "gpu-inference:regions[0].zones[1]: zone europe-west4-b is not in region us-central1"],
    ["a pool whose minimum exceeds its maximum", oneRegion({ gpuPool: { minNodes: 3, maxNodes: 2 } }), "gpu-inference:regions[0].gpuPool.minNodes: 3 is more than maxNodes 2"],
    ["more replicas than the region has GPUs", { ...oneRegion({ gpuPool: { maxNodes: 2 } }), autoscaling: { maxReplicas: 3 } }, "gpu-inference:autoscaling.maxReplicas: 3 replicas plus the rollout's surge pod need 4 GPUs, but gpu-inference:regions[0].gpuPool.maxNodes 2 x gpusPerNode 1 gives us-central1 only 2; raise maxNodes to 4 or lower maxReplicas to 1"],
    // Issue 23, item 6: the old prod example (maxReplicas = maxNodes) would fail its first rollout at peak.
    ["as many replicas as GPUs, leaving no room for the rollout's surge pod", { ...oneRegion({ gpuPool: { maxNodes: 6 } }), autoscaling: { maxReplicas: 6 } }, "gpu-inference:autoscaling.maxReplicas: 6 replicas plus the rollout's surge pod need 7 GPUs, but gpu-inference:regions[0].gpuPool.maxNodes 6 x gpusPerNode 1 gives us-central1 only 6; raise maxNodes to 7 or lower maxReplicas to 5"],
    ["more vCPUs than T4 VMs allow", oneRegion({ gpuPool: { machineType: "n1-standard-64" } }), "gpu-inference:regions[0].gpuPool.machineType: n1-standard-64 has more vCPUs than GCP allows with 1 T4 (max 48)"],
    ["a control plane range that is not a /28", oneRegion({ network: { masterCidr: "172.16.0.0/24" } }), "gpu-inference:regions[0].network.masterCidr: the GKE control plane needs exactly a /28"],
    ["a region listed twice", { project: "my-project-1", regions: [{ name: "us-east1", zones: ["us-east1-c"] }, { name: "us-east1", zones: ["us-east1-d"] }] }, "gpu-inference:regions[1].name: region us-east1 is listed twice"],
    ["overlapping address ranges", { project: "my-project-1", regions: [{ name: "us-east1", zones: ["us-east1-c"] }, { name: "us-west1", zones: ["us-west1-a"], network: { subnetCidr: "10.0.0.0/16" } }] }, "gpu-inference:regions[0].network.subnetCidr: 10.0.0.0/20 overlaps gpu-inference:regions[1].network.subnetCidr (10.0.0.0/16)"],
    ["fewer maximum than minimum replicas", { project: "my-project-1", autoscaling: { minReplicas: 2, maxReplicas: 1 } }, "gpu-inference:autoscaling.minReplicas: 2 is more than maxReplicas 1"],
    // Issue 39, item 6: the load test asks for one model; the stack serves the models it names.
    ["a load test of a model the stack does not serve", { project: "my-project-1", modelRepository: { models: ["squeezenet"] }, loadTest: { enabled: true } }, "gpu-inference:loadTest.model: resnet50 is not among gpu-inference:modelRepository.models (squeezenet), so the load test would find no such model"],
    ["a served model named twice", { project: "my-project-1", modelRepository: { models: ["squeezenet", "squeezenet"] } }, "gpu-inference:modelRepository.models: names a model twice"],
    ["a served model given as a path", { project: "my-project-1", modelRepository: { models: ["../squeezenet"] } }, "gpu-inference:modelRepository.models[0]: must be a model folder name"],
    ["a load-test sweep that ends before it starts", { project: "my-project-1", loadTest: { range: "8:2:1" } }, "gpu-inference:loadTest.range: end of '8:2:1' is below its start"],
    ["a load-test sweep that never steps", { project: "my-project-1", loadTest: { range: "1:8:0" } }, "gpu-inference:loadTest.range: step of '1:8:0' must be a positive integer"],
    ["a load-test sweep from 0 clients", { project: "my-project-1", loadTest: { range: "0:8:1" } }, "gpu-inference:loadTest.range: start of '0:8:1' must be a positive integer"],
    ["a fractional concurrency", { project: "my-project-1", loadTest: { range: "1.5:4" } }, "gpu-inference:loadTest.range: start of '1.5:4' must be a positive integer"],
    ["a load-test range of four parts", { project: "my-project-1", loadTest: { range: "1:8:1:2" } }, "gpu-inference:loadTest.range: '1:8:1:2' is not start[:end[:step]]"],
    ["an endless load-test sweep", { project: "my-project-1", loadTest: { range: "1:0:1" } }, "gpu-inference:loadTest.range: 1:0:1 never ends (end 0 sweeps until a latency threshold, which the load test does not set); give an end"],
  ])("rejects %s, saying what to change", (_case, raw, expected) => {
    expect(problemsOf(raw)).toContain(expected);
  });

  it("takes every load-test range inference-perf runs: one level, fractional request rates", () => {
    const rangeOf = (loadTest: RawStackConfig["loadTest"]) => parseStackConfig({ project: "my-project-1", loadTest }, context).loadTest.range;
    expect(rangeOf({ range: "4" })).toBe("4");
    expect(rangeOf({ mode: "request-rate", range: "0.5:2:0.5" })).toBe("0.5:2:0.5");
    expect(problemsOf({ project: "my-project-1", loadTest: { mode: "concurrency", range: "0.5:2:0.5" } }))
      .toEqual(["gpu-inference:loadTest.range: start of '0.5:2:0.5' must be a positive integer"]);
  });

  it("asks for a name prefix when the stack name does not make a valid default", () => {
    expect(() => parseStackConfig({ project: "my-project-1" }, { ...context, stack: "Production_EU" }))
      .toThrow("gpu-inference:namePrefix: the default inference-Production_EU is not a valid prefix");
    expect(parseStackConfig({ project: "my-project-1", namePrefix: "infer-eu" }, { ...context, stack: "Production_EU" }).namePrefix)
      .toBe("infer-eu");
  });

  it("reports every problem at once", () => {
    const problems = problemsOf({ ...oneRegion({ zones: ["europe-west4-b"], gpuPool: { minNodes: 3, maxNodes: 1 } }), autoscaling: { maxReplicas: 2 } });
    expect(problems).toHaveLength(3);
    expect(() => parseStackConfig({}, context)).toThrow(/^invalid stack configuration; fix these keys:\n {2}- gcp:project/);
  });
});

describe("loadConfig", () => {
  beforeAll(async () => {
    await pulumi.runtime.setMocks({ newResource: () => ({ id: undefined, state: {} }), call: () => ({}) }, "gpu-inference", "staging", false);
  });

  it("reads the stack's keys from Pulumi config, structured values as JSON, the passwords and keys as secrets", async () => {
    pulumi.runtime.setAllConfig({
      "gcp:project": "my-project-1",
      "gpu-inference:environment": "staging",
      "gpu-inference:gpusPerNode": "2",
      "gpu-inference:regions": JSON.stringify([{ name: "us-east1", zones: ["us-east1-c", "us-east1-d"] }]),
      "gpu-inference:grafanaAdminPassword": "s3cret-password",
      "gpu-inference:adminKey": "an-admin-key",
      "gpu-inference:alertmanagerConfig": "route: { receiver: pager }\nreceivers: [{ name: pager }]\n",
    }, ["gpu-inference:grafanaAdminPassword", "gpu-inference:adminKey", "gpu-inference:alertmanagerConfig"]);
    const config = loadConfig();
    expect(config).toMatchObject({ project: "my-project-1", stack: "staging", environment: "staging", gpusPerNode: 2, namePrefix: "inference-staging" });
    expect(config.regions.map((region) => region.name)).toEqual(["us-east1"]);
    for (const secret of [config.grafanaAdminPassword, config.adminKey, config.alertmanagerConfig]) {
      expect(secret).toBeDefined();
      expect(await pulumi.isSecret(secret as pulumi.Output<string>)).toBe(true);
    }
  });

  it.each(["dev", "prod"])("accepts the repository's Pulumi.%s.yaml", (stack) => {
    const stackFile = readStackFile(path.resolve(__dirname, "..", ".."), stack);
    pulumi.runtime.setAllConfig(stackFile.config, stackFile.secretKeys);
    expect(loadConfig().environment).toBe(stack);
  });

  it("fails before declaring anything when a key is wrong, naming the key", () => {
    pulumi.runtime.setAllConfig({ "gcp:project": "my-project-1", "gpu-inference:regions": JSON.stringify([{ name: "us-east1", zones: ["us-west1-a"] }]) });
    expect(() => loadConfig()).toThrow("gpu-inference:regions[0].zones[0]: zone us-west1-a is not in region us-east1");
  });
});
