import { describe, expect, it } from "vitest";
import { schemaProblems } from "./helpers/kubernetes-schemas";

// The strict validator itself: what it must refuse, so that "no problems" over the program's objects means something.
const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { app: "web" } },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image: "nginx", resources: { limits: { memory: "1Gi" } } }] },
    },
  },
};

describe("schemaProblems (strict Kubernetes schema validation)", () => {
  it("accepts a valid object, free-form maps (labels, resource quantities) included", () => {
    expect(schemaProblems(deployment)).toEqual([]);
  });

  it("refuses an unknown field anywhere, as the API server's strict field validation does", () => {
    const typo = structuredClone(deployment) as typeof deployment & { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    typo.spec.template.spec.containers[0]!["imagePullPolice"] = "Always";
    expect(schemaProblems(typo)).toEqual(["unknown field /spec/template/spec/containers/0/imagePullPolice"]);
  });

  it("refuses a wrong type, a value outside an enum and a missing required field", () => {
    const broken = structuredClone(deployment) as unknown as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    const container = broken.spec.template.spec.containers[0]!;
    container["imagePullPolicy"] = "Sometimes";
    container["ports"] = [{ containerPort: "8000" }];
    delete container["name"];
    const problems = schemaProblems(broken as unknown as typeof deployment);
    expect(problems.join("\n")).toMatch(/name/);
    expect(problems.join("\n")).toMatch(/imagePullPolicy/);
    expect(problems.join("\n")).toMatch(/containerPort/);
  });

  it("checks prometheus-operator kinds against their CRD schemas, strictly", () => {
    const monitor = { apiVersion: "monitoring.coreos.com/v1", kind: "PodMonitor", metadata: { name: "m" }, spec: { selector: {}, podMetricsEndpoints: [{ port: "metrics", honourLabels: true }] } };
    expect(schemaProblems(monitor)).toEqual(["unknown field /spec/podMetricsEndpoints/0/honourLabels"]);
  });

  it("refuses a kind it has no schema for, so no kind escapes the check", () => {
    expect(schemaProblems({ apiVersion: "example.com/v1", kind: "Widget" })).toEqual([expect.stringMatching(/no schema registered for example\.com\/v1 Widget/)]);
  });
});
