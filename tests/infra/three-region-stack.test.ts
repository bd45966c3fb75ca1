import { describe, expect, it } from "vitest";
import { loadTestLauncher } from "../../infra/region/load-test";
import { input, resourceNamed, resourcesOfType } from "./helpers/fixture-stack";
import { describeStackContract, resourceTypes as T } from "./helpers/stack-contract";

const PREBUILT_IMAGE = "us-docker.pkg.dev/ci-project/images/inference-server@sha256:1111111111111111111111111111111111111111111111111111111111111111";

// A production stack like Pulumi.prod.yaml: three regions, a domain (HTTPS + gRPC), an image built by CI.
const ALERTMANAGER_CONFIG = "route:\n  receiver: pager\nreceivers:\n  - name: pager\n    pagerduty_configs: [{ routing_key: abc }]\n";

const getStack = describeStackContract({
  stack: "prod",
  grafanaAdminPassword: "correct-horse-battery-staple",
  alertmanagerConfig: ALERTMANAGER_CONFIG,
  raw: {
    project: "infra-test-prod",
    environment: "prod",
    domain: "infer.example.com",
    gpusPerNode: 2,
    image: { reference: PREBUILT_IMAGE },
    regions: [
      { name: "us-central1", zones: ["us-central1-a", "us-central1-b", "us-central1-f"], gpuPool: { machineType: "n1-standard-16", minNodes: 2, maxNodes: 4 } },
      { name: "us-east1", zones: ["us-east1-c", "us-east1-d"], gpuPool: { minNodes: 1, maxNodes: 4 } },
      { name: "europe-west4", zones: ["europe-west4-b", "europe-west4-c"], gpuPool: { minNodes: 1, maxNodes: 4 } },
    ],
    autoscaling: { minReplicas: 2, maxReplicas: 6, queueDurationUsPerRequest: 5000 },
    loadBalancer: { maxRatePerEndpoint: 150, waf: { sensitivity: 2, preview: false } },
    loadTest: { enabled: true, runId: "2", model: "resnet50", protocol: "grpc", mode: "request-rate", range: "50:200:50", lingerSeconds: 45 },
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

  it("protects production: clusters, buckets and address refuse deletion, and old model versions expire", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, T.cluster).map((cluster) => cluster.inputs["deletionProtection"])).toEqual([true, true, true]);
    expect(resourcesOfType(stack, T.cluster).map((cluster) => cluster.inputs["deletionPolicy"])).toEqual(["PREVENT", "PREVENT", "PREVENT"]);
    for (const bucketResource of ["inference-prod-models-bucket", "inference-prod-models-europe-bucket"]) {
      expect(resourceNamed(stack, "gcp:storage/bucket:Bucket", bucketResource).inputs).toMatchObject({
        forceDestroy: false,
        deletionPolicy: "PREVENT",
        lifecycleRules: [{ action: { type: "Delete" }, condition: { daysSinceNoncurrentTime: 30, withState: "ARCHIVED" } }],
      });
    }
    expect(resourceNamed(stack, "gcp:compute/globalAddress:GlobalAddress", "inference-prod-lb-address").inputs["deletionPolicy"]).toBe("PREVENT");
  });

  it("keeps the first continent's bucket and gives europe-west4 a bucket in the EU, readable by the server only", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, "gcp:storage/bucket:Bucket").map((bucket) => [bucket.name, bucket.inputs["name"], bucket.inputs["location"]])).toEqual([
      ["inference-prod-models-bucket", "infra-test-prod-prod-models", "US"],
      ["inference-prod-models-europe-bucket", "infra-test-prod-prod-models-europe", "EU"],
    ]);
    expect(resourceNamed(stack, "gcp:storage/bucketIAMMember:BucketIAMMember", "inference-prod-models-europe-server-reader").inputs).toMatchObject({
      bucket: "infra-test-prod-prod-models-europe", role: "roles/storage.objectViewer", member: "serviceAccount:inference-prod-server@infra-test-prod.iam.gserviceaccount.com",
    });
    expect(Object.fromEntries(Object.entries(stack.outputs.clusters).map(([region, cluster]) => [region, cluster.modelBucket]))).toEqual({
      "us-central1": "infra-test-prod-prod-models", "us-east1": "infra-test-prod-prod-models", "europe-west4": "infra-test-prod-prod-models-europe",
    });
  });

  it("balances prod's T4 nodes over the zones", () => {
    const stack = getStack();
    expect(resourcesOfType(stack, T.nodePool).filter((pool) => pool.name.endsWith("-gpu")).map((pool) => input(pool, "autoscaling", "locationPolicy")))
      .toEqual(["BALANCED", "BALANCED", "BALANCED"]);
  });

  it("serves HTTPS under a MODERN SSL policy, TLS 1.2 or later", () => {
    const stack = getStack();
    expect(resourceNamed(stack, "gcp:compute/sSLPolicy:SSLPolicy", "inference-prod-lb-tls").inputs).toMatchObject({ profile: "MODERN", minTlsVersion: "TLS_1_2" });
    expect(input(resourceNamed(stack, "gcp:compute/targetHttpsProxy:TargetHttpsProxy", "inference-prod-lb-https-proxy"), "sslPolicy")).toBe("inference-prod-lb-tls-id");
  });

  it("sends alerts to the receivers of the stack's alertmanagerConfig secret", () => {
    const stack = getStack();
    for (const region of stack.config.regions) {
      const secret = resourceNamed(stack, "kubernetes:core/v1:Secret", `${region.name}-alertmanager-config`);
      expect(secret.inputs).toMatchObject({ metadata: { name: "alertmanager-config", namespace: "monitoring" }, stringData: { "alertmanager.yaml": ALERTMANAGER_CONFIG } });
      expect(input(resourceNamed(stack, T.release, `${region.name}-kube-prometheus-stack`), "values", "alertmanager"))
        .toEqual({ alertmanagerSpec: { useExistingSecret: true, configSecret: "alertmanager-config" } });
    }
  });

  it("runs the in-cluster load test: inference-perf over gRPC against each region's Service, results scraped by Prometheus", () => {
    const stack = getStack();
    for (const region of stack.config.regions) {
      const job = resourceNamed(stack, "kubernetes:batch/v1:Job", `${region.name}-load-test`);
      expect(job.inputs).toMatchObject({
        metadata: { name: "inference-load-test-2", namespace: "inference", annotations: { "pulumi.com/skipAwait": "true" } },
        spec: { backoffLimit: 0, template: { spec: { restartPolicy: "Never", nodeSelector: { "inference.gke.io/pool": "system" } } } },
      });
      const container = input(job, "spec", "template", "spec", "containers", 0) as Record<string, unknown>;
      expect(container).toMatchObject({
        image: PREBUILT_IMAGE,
        command: ["node", "/etc/inference-load-test/launch.js"],
        env: [{ name: "INFERENCE_ADMIN_KEY", valueFrom: { secretKeyRef: { name: "inference-admin-key", key: "admin-key" } } }],
        ports: [{ name: "metrics", containerPort: 9102 }],
        securityContext: { readOnlyRootFilesystem: true, seccompProfile: { type: "RuntimeDefault" } },
      });
      // The admin key never reaches a command line: no -H, no $(INFERENCE_ADMIN_KEY) in the spec.
      expect(container["args"]).toEqual([
        "-m", "resnet50", "-u", "inference-server.inference.svc.cluster.local:8001", "-i", "grpc", "-b", "1",
        "--request-rate-range", "50:200:50", "-p", "10000", "-r", "10", "-f", "/dev/stdout",
        "--prometheus-port", "9102", "--prometheus-linger-ms", "45000",
      ]);
      expect(JSON.stringify(job.inputs)).not.toMatch(/INFERENCE_ADMIN_KEY\)|-H"/);
      const launcher = resourceNamed(stack, T.configMap, `${region.name}-load-test-launcher`);
      expect(input(job, "spec", "template", "spec", "volumes", 0)).toEqual({ name: "launcher", configMap: { name: "inference-load-test-launcher" } });
      expect(input(launcher, "data", "launch.js")).toBe(loadTestLauncher(stack.config.loadTest));
      expect(resourceNamed(stack, "kubernetes:networking.k8s.io/v1:NetworkPolicy", `${region.name}-load-test-ingress`).inputs).toMatchObject({
        spec: { podSelector: { matchLabels: { "app.kubernetes.io/name": "inference-load-test" } }, ingress: [{ ports: [{ protocol: "TCP", port: 9102 }] }] },
      });
      expect(resourceNamed(stack, "kubernetes:monitoring.coreos.com/v1:PodMonitor", `${region.name}-load-test-monitor`).inputs).toMatchObject({
        metadata: { name: "inference-load-test", namespace: "monitoring" },
        spec: { namespaceSelector: { matchNames: ["inference"] }, selector: { matchLabels: { "app.kubernetes.io/name": "inference-load-test" } }, podMetricsEndpoints: [{ port: "metrics" }] },
      });
    }
  });

  it("gives each region its own address ranges", () => {
    const stack = getStack();
    const subnets = resourcesOfType(stack, "gcp:compute/subnetwork:Subnetwork");
    const ranges = subnets.flatMap((subnet) => [subnet.inputs["ipCidrRange"], ...(subnet.inputs["secondaryIpRanges"] as { ipCidrRange: string }[]).map((range) => range.ipCidrRange)]);
    expect(subnets).toHaveLength(3);
    expect(new Set(ranges).size).toBe(9);
  });
});
