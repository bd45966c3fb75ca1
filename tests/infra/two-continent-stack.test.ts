import { describe, expect, it } from "vitest";
import { resourceNamed, resourcesOfType } from "./helpers/fixture-stack";
import { describeStackContract } from "./helpers/stack-contract";

// A stack across two continents with the image built by Pulumi: one build, pushed to a registry on each.
const getStack = describeStackContract({
  stack: "world",
  raw: {
    project: "infra-test-world",
    regions: [
      { name: "us-central1", zones: ["us-central1-a"] },
      { name: "europe-west4", zones: ["europe-west4-b"] },
    ],
  },
});

const REPOSITORY = "gcp:artifactregistry/repository:Repository";
const READER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember";

describe("two-continent stack", () => {
  it("builds the image once and pushes it to a repository on each continent", () => {
    const stack = getStack();
    const [image, ...more] = resourcesOfType(stack, "docker-build:index:Image");
    expect(more).toEqual([]);
    const tags = image?.inputs["tags"] as string[];
    expect(tags.map((tag) => tag.replace(/:src-[0-9a-f]{16}$/, ":<tag>"))).toEqual([
      "us-docker.pkg.dev/infra-test-world/inference-world/inference-server:<tag>",
      "europe-docker.pkg.dev/infra-test-world/inference-world/inference-server:<tag>",
    ]);
    expect((image?.inputs["registries"] as { address: string }[]).map((registry) => registry.address)).toEqual(["us-docker.pkg.dev", "europe-docker.pkg.dev"]);
    // The build cache lives in the first continent's repository only.
    expect(image?.inputs["cacheTo"]).toEqual([expect.objectContaining({ registry: expect.objectContaining({ ref: "us-docker.pkg.dev/infra-test-world/inference-world/inference-server:buildcache" }) })]);
  });

  it("keeps the first continent's names, suffixes the others', and cleans up and lets the nodes read every repository", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, REPOSITORY).map((repository) => [repository.name, repository.inputs["location"]])).toEqual([
      ["inference-world-image-repository", "us"],
      ["inference-world-image-repository-europe", "europe"],
    ]);
    const [first, second] = resourcesOfType(stack, REPOSITORY);
    expect(second?.inputs["cleanupPolicies"]).toEqual(first?.inputs["cleanupPolicies"]);
    expect(resourceNamed(stack, READER, "inference-world-image-nodes-reader-europe").inputs).toMatchObject({
      location: "europe", role: "roles/artifactregistry.reader", member: "serviceAccount:inference-world-nodes@infra-test-world.iam.gserviceaccount.com",
    });
    expect(resourcesOfType(stack, READER)).toHaveLength(2);
  });

  it("runs each region on its own continent's copy of the image, pinned to the one build's digest", () => {
    const stack = getStack();
    expect(stack.outputs.clusters["us-central1"]?.image).toBe(stack.outputs.image);
    expect(stack.outputs.image).toMatch(/^us-docker\.pkg\.dev\/infra-test-world\/inference-world\/inference-server@sha256:/);
    expect(stack.outputs.clusters["europe-west4"]?.image).toMatch(/^europe-docker\.pkg\.dev\/infra-test-world\/inference-world\/inference-server:src-[0-9a-f]{16}@sha256:/);
  });
});
