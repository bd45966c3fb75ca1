import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { parseIpv4Cidr, rangesOverlap } from "./cidr";
import { multiRegionOf } from "./multi-region";
import { servingRollout } from "./rollout";
import { parseLoadRange } from "../tools/perf/index";

// Every key below is a stack config key `<project>:<key>` (see Pulumi.dev.yaml); `project` is `gcp:project`.
// Each has a default except the GCP project, so a stack file only says what differs.

const regionNamePattern = /^[a-z]+-[a-z]+\d+$/;
const zoneNamePattern = /^[a-z]+-[a-z]+\d+-[a-z]$/;
const dnsLabelPattern = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const hostnamePattern = /^(?=.{1,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const t4MachineTypePattern = /^n1-(standard|highmem|highcpu)-(\d+)$/;
const cidrSchema = z.string().refine((cidr) => parseIpv4Cidr(cidr) !== undefined, {
  message: "must be an IPv4 CIDR block such as 10.0.0.0/20 (address aligned to the prefix)",
});

const regionSchema = z.object({
  /** GCP region of the cluster, e.g. us-central1. */
  name: z.string().regex(regionNamePattern, "must be a GCP region name such as us-central1"),
  /**
   * Zones of this region that offer nvidia-tesla-t4 (not every zone does: check
   * `gcloud compute accelerator-types list --filter=name=nvidia-tesla-t4`). Both node pools and the NEGs live here.
   */
  zones: z.array(z.string().regex(zoneNamePattern, "must be a GCP zone name such as us-central1-a")).min(1).max(4),
  /** The T4 pool: one serving replica per GPU. */
  gpuPool: z.object({
    /** T4 attaches only to N1 machine types. Default n1-standard-4: 4 vCPUs, 15 GB, as in GKE's Triton app. */
    machineType: z.string().regex(t4MachineTypePattern, "T4 GPUs attach only to N1 machine types such as n1-standard-4").default("n1-standard-4"),
    /** Fewest GPU nodes the cluster autoscaler keeps, across all the region's zones (0 allows scale to zero). */
    minNodes: z.number().int().min(0).default(1),
    /**
     * Most GPU nodes, across all zones: the region's T4 quota must cover maxNodes x gpusPerNode, and the pool
     * must hold autoscaling.maxReplicas plus the rollout's surge pod (one GPU each).
     */
    maxNodes: z.number().int().min(1).default(3),
    /** Spot VMs cost ~60-90% less but can be preempted at any time; fine for dev, not for a serving SLO. */
    spot: z.boolean().default(false),
    /**
     * Where the cluster autoscaler adds T4 nodes: ANY takes whichever listed zone has capacity (rides out a
     * per-zone stockout), BALANCED spreads nodes evenly over the zones. Default: BALANCED in prod, ANY elsewhere.
     */
    locationPolicy: z.enum(["ANY", "BALANCED"]).optional(),
  }).prefault({}),
  /**
   * The pool for everything that needs no GPU: monitoring, prometheus-adapter, the load test, kube-system.
   * Sizes are totals over the region's zones (the load balancer does not need a node in every zone).
   */
  systemPool: z.object({
    machineType: z.string().regex(/^[a-z][a-z0-9]*-[a-z]+-\d+$/, "must be a machine type such as e2-standard-4").default("e2-standard-4"),
    minNodes: z.number().int().min(1).default(1),
    maxNodes: z.number().int().min(1).default(3),
  }).prefault({}),
  /** Address plan; each defaults to a block derived from the region's position in `regions`. */
  network: z.object({
    subnetCidr: cidrSchema.optional(),
    podsCidr: cidrSchema.optional(),
    servicesCidr: cidrSchema.optional(),
    /** The /28 of the GKE control plane's private endpoint. */
    masterCidr: cidrSchema.optional(),
  }).prefault({}),
});

const rawStackConfigSchema = z.object({
  /** gcp:project - the GCP project every resource goes into. */
  project: z.string({ error: "is required: run `pulumi config set gcp:project <project-id>`" }).regex(/^[a-z][-a-z0-9]{4,28}[a-z0-9]$/, "must be a GCP project id"),
  /** dev, staging or prod. prod turns deletion protection on; clusters carry it as the `environment` label the policy pack checks. */
  environment: z.enum(["dev", "staging", "prod"]).default("dev"),
  /** Prefix of the names GCP and operators see (clusters, NEGs, node tags). Default `inference-<stack>`. */
  namePrefix: z.string().regex(dnsLabelPattern, "must be lower-case letters, digits and dashes").max(20).optional(),
  /** One GKE cluster per entry, all behind the one global load balancer. */
  regions: z.array(regionSchema).min(1).max(8).prefault([{ name: "us-central1", zones: ["us-central1-a", "us-central1-b"] }]),
  /** T4 GPUs per GPU node: 1, 2 or 4 (the counts GCP offers for T4). Each serving replica uses one. */
  gpusPerNode: z.union([z.literal(1), z.literal(2), z.literal(4)]).default(1),
  cluster: z.object({
    /** GKE release channel; versions are never pinned, so there is no version churn in diffs. */
    releaseChannel: z.enum(["RAPID", "REGULAR", "STABLE", "EXTENDED"]).default("REGULAR"),
    /** Default: on for prod, off elsewhere (so `pulumi destroy` works on dev stacks). */
    deletionProtection: z.boolean().optional(),
  }).prefault({}),
  /**
   * Clusters, the model buckets, the image repositories and the global address refuse deletion and replacement
   * (`deletionPolicy: PREVENT`) while this is on. Default: on for prod, off elsewhere.
   */
  protectResources: z.boolean().optional(),
  image: z.object({
    /** A prebuilt image to deploy (e.g. from CI). When unset, Pulumi builds server/Dockerfile.cuda and pushes it. */
    reference: z.string().min(1).optional(),
    /**
     * Tag of the image Pulumi builds. Default: `src-<hash>` of what goes into the image, so an unchanged server
     * keeps its tag, its digest and its pods. The Deployment pins the pushed digest either way.
     */
    tag: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, "must be a Docker tag").optional(),
    /**
     * Artifact Registry location of the first continent's image repository (a region or multi-region such as us).
     * Default: the multi-region (us, europe, asia) of the first region. Regions on other continents always pull
     * from a repository in their own continent's multi-region (see `continents`).
     */
    registryLocation: z.string().min(2).optional(),
  }).prefault({}),
  /** Hostname for HTTPS (a Google-managed certificate) and gRPC. Unset: plain HTTP on the global IP. */
  domain: z.string().regex(hostnamePattern, "must be a fully qualified lower-case hostname such as infer.example.com").optional(),
  modelRepository: z.object({
    /** GCS bucket the pods mount read-only as their model repository. Default `<project>-<stack>-models`. */
    bucketName: z.string().regex(/^[a-z0-9][-a-z0-9_.]{1,61}[a-z0-9]$/, "must be a valid GCS bucket name").optional(),
    /**
     * The first continent's bucket location; default: the multi-region (US, EU, ASIA) of the first region. Regions
     * on other continents read a copy in their own continent's multi-region, named `<bucketName>-<continent>`.
     */
    location: z.string().min(2).optional(),
    /** Local model repository uploaded to the bucket (built by `npm run models`), relative to the project root. */
    sourceDir: z.string().min(1).default("models"),
    /**
     * The models (top-level folders of sourceDir) the stack serves; only they are uploaded. Every serving pod
     * loads each one on its GPU and is ready only when all are, so one model that fails on a T4 keeps every pod
     * unready: name the ones you mean to serve. Unset: every model in sourceDir, unless sourceDir is the
     * generated example repository (test models with random weights), which must be named model by model.
     */
    models: z.array(z.string().regex(/^[^/\\.][^/\\]*$/, "must be a model folder name")).min(1)
      .refine((models) => new Set(models).size === models.length, "names a model twice").optional(),
  }).prefault({}),
  server: z.object({
    /** CPU the server container requests (pre/post-processing and the HTTP/gRPC frontends run on CPU). */
    cpuRequest: z.string().regex(/^\d+(\.\d+)?m?$/, "must be a Kubernetes CPU quantity such as 2 or 1500m").default("2"),
    /** Memory the container requests and is limited to (model weights are staged in host memory). */
    memory: z.string().regex(/^\d+(Mi|Gi)$/, "must be a Kubernetes memory quantity such as 8Gi").default("8Gi"),
    /** The server's --log-verbose level. */
    logVerbose: z.number().int().min(0).max(3).default(0),
  }).prefault({}),
  autoscaling: z.object({
    /** Fewest serving replicas per region (the PDB keeps all but one of them through node upgrades). */
    minReplicas: z.number().int().min(1).default(1),
    /**
     * Most serving replicas per region; each needs one T4, and a rollout adds one more pod, so every region's
     * gpuPool.maxNodes x gpusPerNode must be at least maxReplicas + 1.
     */
    maxReplicas: z.number().int().min(1).default(2),
    /** Target average time a request waits in the server's queue, µs (the queue-time HPA metric). */
    queueDurationUsPerRequest: z.number().int().min(1).default(10_000),
    /** Target average GPU utilization, percent (DCGM_FI_DEV_GPU_UTIL), as in the seed tutorial. */
    gpuUtilizationPercent: z.number().int().min(1).max(100).default(85),
    /** How long load must stay low before replicas are removed; the seed's MIG cool-down was 360 s. */
    scaleDownStabilizationSeconds: z.number().int().min(0).max(3600).default(360),
  }).prefault({}),
  loadBalancer: z.object({
    /** Requests/s one pod takes before the load balancer spills over to other zones and regions. */
    maxRatePerEndpoint: z.number().positive().default(100),
    /** Cloud Armor: requests per minute one client IP may send before it gets HTTP 429. */
    rateLimitRequestsPerMinute: z.number().int().min(1).default(6000),
    /** Fraction of requests the load balancer logs (0-1); logs are billed per GiB ingested. */
    logSampleRate: z.number().min(0).max(1).default(0.1),
    /** Longest an HTTP inference request may take, s. */
    requestTimeoutSec: z.number().int().min(1).max(86_400).default(300),
    /** Longest a gRPC call (including a stream) may stay open, s; the API default of 30 s cuts streams. */
    grpcTimeoutSec: z.number().int().min(1).max(86_400).default(3600),
    /**
     * How `pulumi up` waits for GKE's NEG controller to create each region's standalone NEGs (see infra/README.md,
     * "Standalone NEGs"): poll every `pollIntervalSeconds`; once one zone has them, give the other zones
     * `settleSeconds` more; give up on a region after `timeoutSeconds`. Must stay under the Deployment's 30 min.
     */
    negWait: z.object({
      timeoutSeconds: z.number().positive().max(1500).default(900),
      settleSeconds: z.number().min(0).default(120),
      pollIntervalSeconds: z.number().positive().default(15),
    }).prefault({}),
    /**
     * Cloud Armor preconfigured WAF rules (OWASP CRS 3.3) on REST requests (gRPC is never inspected): sensitivity
     * 1-4 (1: fewest false positives). `preview` (default on) only logs what they would block: binary tensor
     * bodies can trip the signatures, so turn it off once the logs show no hits on real traffic.
     */
    waf: z.object({
      sensitivity: z.number().int().min(1).max(4).default(1),
      preview: z.boolean().default(true),
    }).prefault({}),
  }).prefault({}),
  /** VPC logging, billed per GiB: flow-log sampling of every subnet (0 turns flow logs off) and firewall-rule logging. */
  vpc: z.object({
    flowLogSampleRate: z.number().min(0).max(1).default(0.1),
    firewallLogging: z.boolean().default(false),
  }).prefault({}),
  monitoring: z.object({
    /** prometheus-community/kube-prometheus-stack chart version (pinned: upgrades are deliberate). */
    kubePrometheusStackVersion: z.string().min(1).default("88.5.3"),
    /** prometheus-community/prometheus-adapter chart version. */
    prometheusAdapterVersion: z.string().min(1).default("5.2.0"),
    /** How long each cluster's Prometheus keeps samples. */
    retention: z.string().regex(/^\d+[hdwy]$/, "must be a Prometheus duration such as 15d").default("15d"),
  }).prefault({}),
  /**
   * The in-cluster load test (the seeds' Locust step): a Job in every region that runs inference-perf from the
   * server image against the region's Service, writes perf_analyzer's CSV to its log and serves its results to
   * Prometheus while it runs (the overview dashboard's "Load test" panels).
   */
  loadTest: z.object({
    enabled: z.boolean().default(false),
    /** Change it (any DNS label) to run the test again: the Job is replaced. */
    runId: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be lower-case letters, digits and dashes").max(20).default("1"),
    model: z.string().min(1).default("resnet50"),
    protocol: z.enum(["http", "grpc"]).default("http"),
    /** perf_analyzer's sweep: `concurrency` (closed loop, requests kept outstanding) or `request-rate` (open loop, per second). */
    mode: z.enum(["concurrency", "request-rate"]).default("concurrency"),
    /**
     * start[:end[:step]] of the sweep, as perf_analyzer's --concurrency-range / --request-rate-range; checked
     * against `mode` by the parser the Job's inference-perf uses, so a range accepted here is one it runs.
     */
    range: z.string().min(1).default("1:8:1"),
    batchSize: z.number().int().min(1).default(1),
    /** One measurement window, ms (perf_analyzer -p). */
    measurementIntervalMs: z.number().int().min(100).default(10_000),
    /** Most windows per load level (perf_analyzer -r). */
    maxTrials: z.number().int().min(3).default(10),
    /** How long the finished test keeps serving its results so Prometheus scrapes the last level, s. */
    lingerSeconds: z.number().int().min(0).max(600).default(60),
  }).prefault({}),
});

/** What the stack file says, as the program reads it (keys without the `<project>:` prefix). */
export type RawStackConfig = z.input<typeof rawStackConfigSchema>;

/** Every key of the schema, `project` (read from `gcp:project`) included. */
export const rawStackConfigKeys = Object.keys(rawStackConfigSchema.shape) as (keyof RawStackConfig)[];

/**
 * Where the regions of one continent pull the image from and read the models from: an Artifact Registry
 * repository and a bucket in the continent's multi-region (us, europe, asia; a region outside those is its own).
 */
export interface ContinentConfig {
  /** The continent's Artifact Registry multi-region (us, europe, asia), or the region itself elsewhere. */
  readonly name: string;
  /**
   * Appended to the names of the continent's resources: empty for the first region's continent, so a stack that
   * grows a continent keeps (and never replaces) what it had; `-<name>` for the others.
   */
  readonly suffix: string;
  readonly registryLocation: string;
  readonly bucketName: string;
  readonly bucketLocation: string;
  /** The stack's regions on this continent, in stack order. */
  readonly regions: readonly string[];
}

/** One region's settings with every default filled in. */
export interface RegionConfig {
  readonly name: string;
  readonly zones: readonly string[];
  readonly gpuPool: {
    readonly machineType: string;
    readonly minNodes: number;
    readonly maxNodes: number;
    readonly spot: boolean;
    readonly locationPolicy: "ANY" | "BALANCED";
  };
  readonly systemPool: { readonly machineType: string; readonly minNodes: number; readonly maxNodes: number };
  readonly network: { readonly subnetCidr: string; readonly podsCidr: string; readonly servicesCidr: string; readonly masterCidr: string };
}

type ParsedStackConfig = z.output<typeof rawStackConfigSchema>;

/** The validated stack configuration the program is built from. */
export interface StackConfig extends Omit<ParsedStackConfig, "regions" | "namePrefix" | "cluster" | "modelRepository" | "image" | "protectResources"> {
  readonly stack: string;
  readonly namePrefix: string;
  readonly regions: readonly RegionConfig[];
  readonly cluster: Omit<ParsedStackConfig["cluster"], "deletionProtection"> & { readonly deletionProtection: boolean };
  readonly protectResources: boolean;
  readonly image: Omit<ParsedStackConfig["image"], "registryLocation">;
  readonly modelRepository: Omit<ParsedStackConfig["modelRepository"], "bucketName" | "location">;
  /** One image repository and model bucket per continent the regions span, the first region's continent first. */
  readonly continents: readonly ContinentConfig[];
  /**
   * `<project>:grafanaAdminPassword` (secret). Unset: Grafana's chart generates a random password and keeps it in
   * the cluster (read it with kubectl); set: every region's Grafana uses it.
   */
  readonly grafanaAdminPassword?: pulumi.Output<string>;
  /**
   * `<project>:adminKey` (secret): the value of the `admin-key` header the server's restricted APIs (model
   * control, config, statistics, trace, logging, shared memory) require. Unset: the program generates one.
   */
  readonly adminKey?: pulumi.Output<string>;
  /**
   * `<project>:alertmanagerConfig` (secret): a whole alertmanager.yaml (route and receivers). Unset: alerts
   * reach Alertmanager but no receiver.
   */
  readonly alertmanagerConfig?: pulumi.Output<string>;
}

/** Raised for a stack file that would not deploy; the message lists every key to fix. */
export class StackConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid stack configuration; fix these keys:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "StackConfigError";
  }
}

// T4 VM shapes GCP accepts: up to 48 vCPUs with 1 or 2 GPUs, up to 96 with 4.
function maxVcpusForT4Count(gpuCount: 1 | 2 | 4): number {
  return gpuCount === 4 ? 96 : 48;
}

/** Default address plan for the region at `index`: disjoint from every other index and from GCP's reserved ranges. */
function defaultNetwork(index: number): RegionConfig["network"] {
  return {
    subnetCidr: `10.0.${index * 16}.0/20`,
    servicesCidr: `10.1.${index * 16}.0/20`,
    podsCidr: `10.${64 + index * 4}.0.0/14`,
    masterCidr: `172.16.0.${index * 16}/28`,
  };
}

function configKey(namespace: string, path: readonly PropertyKey[]): string {
  const [head, ...rest] = path;
  const key = head === "project" ? "gcp:project" : `${namespace}:${String(head)}`;
  return rest.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : `${text}.${String(part)}`), key);
}

function crossFieldProblems(config: StackConfig, namespace: string): string[] {
  const problems: string[] = [];
  const key = (...path: PropertyKey[]): string => configKey(namespace, path);
  if (!dnsLabelPattern.test(config.namePrefix) || config.namePrefix.length > 20) {
    problems.push(`${key("namePrefix")}: the default inference-${config.stack} is not a valid prefix (lower-case letters, digits, dashes, at most 20 characters); set one`);
  }
  const seenRegions = new Set<string>();
  const ranges: { key: string; cidr: string }[] = [];
  config.regions.forEach((region, index) => {
    if (seenRegions.has(region.name)) problems.push(`${key("regions", index, "name")}: region ${region.name} is listed twice`);
    seenRegions.add(region.name);
    region.zones.forEach((zone, zoneIndex) => {
      if (!zone.startsWith(`${region.name}-`)) {
        problems.push(`${key("regions", index, "zones", zoneIndex)}: zone ${zone} is not in region ${region.name}`);
      }
    });
    if (new Set(region.zones).size !== region.zones.length) problems.push(`${key("regions", index, "zones")}: a zone is listed twice`);
    for (const pool of ["gpuPool", "systemPool"] as const) {
      if (region[pool].minNodes > region[pool].maxNodes) {
        problems.push(`${key("regions", index, pool, "minNodes")}: ${region[pool].minNodes} is more than maxNodes ${region[pool].maxNodes}`);
      }
    }
    const vcpus = Number(t4MachineTypePattern.exec(region.gpuPool.machineType)?.[2]);
    if (vcpus > maxVcpusForT4Count(config.gpusPerNode)) {
      problems.push(`${key("regions", index, "gpuPool", "machineType")}: ${region.gpuPool.machineType} has more vCPUs than GCP allows with ${config.gpusPerNode} T4 (max ${maxVcpusForT4Count(config.gpusPerNode)})`);
    }
    const gpuCapacity = region.gpuPool.maxNodes * config.gpusPerNode;
    const gpusAtPeakRollout = config.autoscaling.maxReplicas + servingRollout.maxSurge;
    if (gpusAtPeakRollout > gpuCapacity) {
      problems.push(`${key("autoscaling", "maxReplicas")}: ${config.autoscaling.maxReplicas} replicas plus the rollout's surge pod need ${gpusAtPeakRollout} GPUs, but ${key("regions", index, "gpuPool", "maxNodes")} ${region.gpuPool.maxNodes} x gpusPerNode ${config.gpusPerNode} gives ${region.name} only ${gpuCapacity}; raise maxNodes to ${Math.ceil(gpusAtPeakRollout / config.gpusPerNode)} or lower maxReplicas to ${gpuCapacity - servingRollout.maxSurge}`);
    }
    for (const field of ["subnetCidr", "podsCidr", "servicesCidr", "masterCidr"] as const) {
      ranges.push({ key: key("regions", index, "network", field), cidr: region.network[field] });
    }
    const masterRange = parseIpv4Cidr(region.network.masterCidr);
    if (masterRange !== undefined && masterRange.lastAddress - masterRange.firstAddress !== 15) {
      problems.push(`${key("regions", index, "network", "masterCidr")}: the GKE control plane needs exactly a /28`);
    }
  });
  ranges.forEach((a, i) => {
    for (const b of ranges.slice(i + 1)) {
      const rangeA = parseIpv4Cidr(a.cidr);
      const rangeB = parseIpv4Cidr(b.cidr);
      if (rangeA !== undefined && rangeB !== undefined && rangesOverlap(rangeA, rangeB)) {
        problems.push(`${a.key}: ${a.cidr} overlaps ${b.key} (${b.cidr})`);
      }
    }
  });
  if (config.autoscaling.minReplicas > config.autoscaling.maxReplicas) {
    problems.push(`${key("autoscaling", "minReplicas")}: ${config.autoscaling.minReplicas} is more than maxReplicas ${config.autoscaling.maxReplicas}`);
  }
  problems.push(...loadRangeProblems(config.loadTest, key("loadTest", "range")));
  const served = config.modelRepository.models;
  if (config.loadTest.enabled && served !== undefined && !served.includes(config.loadTest.model)) {
    problems.push(`${key("loadTest", "model")}: ${config.loadTest.model} is not among ${key("modelRepository", "models")} (${served.join(", ")}), so the load test would find no such model`);
  }
  for (const continent of config.continents) {
    if (continent.bucketName.length > 63) {
      problems.push(`${key("modelRepository", "bucketName")}: bucket name ${continent.bucketName} is longer than 63 characters; set a shorter one`);
    }
  }
  return problems;
}

/**
 * What inference-perf would refuse in the load test's range, found before `pulumi up` instead of in a failed Job.
 * An endless concurrency sweep (end 0) is refused too: it stops only at a latency threshold, which the Job does
 * not set.
 */
function loadRangeProblems(loadTest: StackConfig["loadTest"], rangeKey: string): string[] {
  try {
    const range = parseLoadRange(loadTest.range, loadTest.mode);
    if (range.end === 0) return [`${rangeKey}: ${loadTest.range} never ends (end 0 sweeps until a latency threshold, which the load test does not set); give an end`];
    return [];
  } catch (error) {
    return [`${rangeKey}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * Validates a stack's configuration and fills in every default. Pure: `loadConfig` feeds it from
 * `pulumi.Config`, tests feed it objects.
 *
 * @param raw the stack's settings, keys without the `<project>:` prefix; `project` is `gcp:project`.
 * @param context `namespace` is the config namespace (the Pulumi project name), used in error messages.
 * @throws StackConfigError naming every key that is wrong and why.
 */
export function parseStackConfig(raw: unknown, context: { readonly stack: string; readonly namespace: string }): StackConfig {
  const parsed = rawStackConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new StackConfigError(parsed.error.issues.map((issue) => `${configKey(context.namespace, issue.path)}: ${issue.message}`));
  }
  const { regions, namePrefix: configuredPrefix, cluster, modelRepository, image, protectResources, ...rest } = parsed.data;
  const namePrefix = configuredPrefix ?? `inference-${context.stack}`;
  const production = rest.environment === "prod";
  const config: StackConfig = {
    ...rest,
    stack: context.stack,
    namePrefix,
    cluster: { ...cluster, deletionProtection: cluster.deletionProtection ?? production },
    protectResources: protectResources ?? production,
    image: definedEntries({ reference: image.reference, tag: image.tag }),
    modelRepository: { sourceDir: modelRepository.sourceDir, ...definedEntries({ models: modelRepository.models }) },
    continents: continentsOf(regions.map((region) => region.name), {
      bucketName: modelRepository.bucketName ?? `${rest.project}-${context.stack}-models`,
      ...definedEntries({ registryLocation: image.registryLocation, bucketLocation: modelRepository.location }),
    }),
    regions: regions.map((region, index) => ({
      ...region,
      gpuPool: { ...region.gpuPool, locationPolicy: region.gpuPool.locationPolicy ?? (production ? "BALANCED" : "ANY") },
      network: { ...defaultNetwork(index), ...definedEntries(region.network) },
    })),
  };
  const problems = crossFieldProblems(config, context.namespace);
  if (problems.length > 0) throw new StackConfigError(problems);
  return config;
}

/**
 * Groups `regions` by continent, the first region's continent first. The first continent's registry and bucket
 * take the configured locations and bucket name (so a single-continent stack keeps its names); every other
 * continent gets its multi-region and `<bucketName>-<continent>`.
 */
function continentsOf(
  regions: readonly string[],
  first: { readonly bucketName: string; readonly registryLocation?: string; readonly bucketLocation?: string },
): ContinentConfig[] {
  const continents: ContinentConfig[] = [];
  for (const region of regions) {
    const home = multiRegionOf(region);
    const known = continents.find((continent) => continent.name === home.artifactRegistry);
    if (known !== undefined) {
      continents[continents.indexOf(known)] = { ...known, regions: [...known.regions, region] };
    } else if (continents.length === 0) {
      continents.push({
        name: home.artifactRegistry,
        suffix: "",
        registryLocation: first.registryLocation ?? home.artifactRegistry,
        bucketName: first.bucketName,
        bucketLocation: first.bucketLocation ?? home.storage,
        regions: [region],
      });
    } else {
      continents.push({
        name: home.artifactRegistry,
        suffix: `-${home.artifactRegistry}`,
        registryLocation: home.artifactRegistry,
        bucketName: `${first.bucketName}-${home.artifactRegistry}`,
        bucketLocation: home.storage,
        regions: [region],
      });
    }
  }
  return continents;
}

/** The continent whose registry and bucket `region` uses. */
export function continentOf(config: Pick<StackConfig, "continents">, region: string): ContinentConfig {
  const continent = config.continents.find((candidate) => candidate.regions.includes(region));
  if (continent === undefined) throw new Error(`region ${region} is not in the stack`);
  return continent;
}

/** `value` without its undefined entries (optional keys stay absent rather than present as undefined). */
export function definedEntries<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
