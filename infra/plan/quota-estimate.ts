import { SYSTEM_NODE_DISK_GIB } from "../region/gke-cluster";
import { GPU_NODE_DISK_GIB } from "../region/gpu-node-pool";
import { PROMETHEUS_VOLUME_GIB } from "../region/kube-prometheus-stack-values";
import { type StackConfig } from "../stack-config";
import { minimumGpuNodes } from "./cost-estimate";
import { parseMachineType } from "./machine-types";

/** One Compute Engine quota a stack needs, at its smallest and largest scale. */
export interface QuotaLine {
  /** A region's name, or `global`. */
  readonly scope: string;
  /** The quota's metric name, as the Quotas page and `gcloud compute regions describe` spell it. */
  readonly metric: string;
  readonly min: number;
  readonly max: number;
  /** The largest scale plus the one extra node per pool that a surge upgrade adds (maxSurge 1 on both pools). */
  readonly maxWithSurge: number;
}

/** What `npm run plan` prints under "Quotas". */
export interface QuotaEstimate {
  readonly lines: readonly QuotaLine[];
  readonly notes: readonly string[];
}

// Quota metric names (Compute Engine API Quota.metric; docs, "Allocation quotas",
// https://cloud.google.com/compute/resource-usage):
// - CPUS: regional vCPUs of N1 and E2 (the GPU pool is always N1, the system pool E2 by default); every other
//   family has its own, <FAMILY>_CPUS (N2_CPUS, C3_CPUS...). CPUS_ALL_REGIONS: every region's vCPUs together,
//   whatever the family, project-wide.
// - NVIDIA_T4_GPUS, or PREEMPTIBLE_NVIDIA_T4_GPUS for spot VMs, per region; GPUS_ALL_REGIONS: every GPU, global.
// - SSD_TOTAL_GB: regional pd-ssd and pd-balanced GB (node boot disks and the Prometheus volume, all
//   pd-balanced here); pd-standard would count against DISKS_TOTAL_GB instead.
const FAMILIES_ON_CPUS = new Set(["n1", "e2"]);
const METRIC = {
  cpus: "CPUS",
  cpusAllRegions: "CPUS_ALL_REGIONS",
  t4: "NVIDIA_T4_GPUS",
  spotT4: "PREEMPTIBLE_NVIDIA_T4_GPUS",
  gpusAllRegions: "GPUS_ALL_REGIONS",
  ssd: "SSD_TOTAL_GB",
} as const;

// The cluster's own default pool (removeDefaultNodePool, initialNodeCount 1 per zone, no machine type set):
// GKE's defaults, e2-medium with a 100 GB pd-balanced boot disk (@pulumi/gcp ClusterNodeConfig machineType and
// diskSizeGb docs).
const DEFAULT_POOL = { vcpusPerNode: 2, diskGbPerNode: 100 } as const;

interface Scale {
  readonly min: number;
  readonly max: number;
  readonly maxWithSurge: number;
}

const line = (scope: string, metric: string, scale: Scale): QuotaLine => ({ scope, metric, ...scale });
const sum = (scales: readonly Scale[]): Scale => ({
  min: scales.reduce((total, scale) => total + scale.min, 0),
  max: scales.reduce((total, scale) => total + scale.max, 0),
  maxWithSurge: scales.reduce((total, scale) => total + scale.maxWithSurge, 0),
});
/** `perNode` of each node of a pool that runs `min` to `max` nodes and surges one more during upgrades. */
const pool = (perNode: number, min: number, max: number): Scale => ({ min: perNode * min, max: perNode * max, maxWithSurge: perNode * (max + 1) });

/**
 * The Compute Engine quotas a stack's nodes and disks use, per region and project-wide, at its smallest scale
 * (as in the cost estimate: the GPU pool's minimum or the nodes the HPA's minimum replicas hold, the system
 * pool's minimum), its largest (every pool at its maximum) and its largest during a node upgrade (one surge
 * node per pool). It refuses nothing: the project's limits are not known offline.
 */
export function estimateStackQuotas(config: StackConfig): QuotaEstimate {
  const unreadable = new Set<string>();
  const cpuQuotaOf = (machineType: string) => {
    const machine = parseMachineType(machineType);
    if (machine === undefined) unreadable.add(machineType);
    return { metric: machine === undefined || FAMILIES_ON_CPUS.has(machine.family) ? METRIC.cpus : `${machine.family.toUpperCase()}_CPUS`, vcpus: machine?.vcpus ?? 0 };
  };
  const regions = config.regions.map((region) => {
    const { gpuPool, systemPool } = region;
    const gpuMin = minimumGpuNodes(config, gpuPool.minNodes);
    const gpuCpus = cpuQuotaOf(gpuPool.machineType);
    const systemCpus = cpuQuotaOf(systemPool.machineType);
    const byMetric = new Map<string, Scale[]>();
    for (const [quota, scale] of [[gpuCpus, pool(gpuCpus.vcpus, gpuMin, gpuPool.maxNodes)], [systemCpus, pool(systemCpus.vcpus, systemPool.minNodes, systemPool.maxNodes)]] as const) {
      byMetric.set(quota.metric, [...(byMetric.get(quota.metric) ?? []), scale]);
    }
    const cpuLines = [...byMetric].map(([metric, scales]) => line(region.name, metric, sum(scales)));
    const cpus = sum(cpuLines);
    const gpus = pool(config.gpusPerNode, gpuMin, gpuPool.maxNodes);
    const prometheus = { min: PROMETHEUS_VOLUME_GIB, max: PROMETHEUS_VOLUME_GIB, maxWithSurge: PROMETHEUS_VOLUME_GIB };
    const ssd = sum([pool(GPU_NODE_DISK_GIB, gpuMin, gpuPool.maxNodes), pool(SYSTEM_NODE_DISK_GIB, systemPool.minNodes, systemPool.maxNodes), prometheus]);
    return { name: region.name, zones: region.zones.length, spot: gpuPool.spot, cpuLines, cpus, gpus, ssd };
  });
  const lines = [
    ...regions.flatMap((region) => [
      ...region.cpuLines,
      line(region.name, region.spot ? METRIC.spotT4 : METRIC.t4, region.gpus),
      line(region.name, METRIC.ssd, region.ssd),
    ]),
    line("global", METRIC.cpusAllRegions, sum(regions.map((region) => region.cpus))),
    line("global", METRIC.gpusAllRegions, sum(regions.map((region) => region.gpus))),
  ];
  const notes: string[] = [];
  if (regions.some((region) => region.spot)) {
    notes.push(`spot nodes' vCPUs are counted in ${METRIC.cpus}; a project with a PREEMPTIBLE_CPUS quota uses that instead`);
  }
  const defaultPoolOf = (zones: number) => ({ vcpus: zones * DEFAULT_POOL.vcpusPerNode, gb: zones * DEFAULT_POOL.diskGbPerNode });
  const largest = defaultPoolOf(Math.max(...regions.map((region) => region.zones)));
  const withinMinimum = regions.every((region) => {
    const defaultPool = defaultPoolOf(region.zones);
    return (region.cpuLines.find((quota) => quota.metric === METRIC.cpus)?.min ?? 0) >= defaultPool.vcpus && region.ssd.min >= defaultPool.gb;
  });
  notes.push(`creating a cluster briefly runs GKE's default pool (one e2-medium per zone, 2 vCPUs and a 100 GB pd-balanced disk each), which GKE removes before the program's pools are created: up to ${largest.vcpus} ${METRIC.cpus} and ${largest.gb} ${METRIC.ssd} in a region, ${withinMinimum ? "within each region's minimum" : "more than some region's minimum"}`);
  if (unreadable.size > 0) notes.push(`no vCPU count known for ${[...unreadable].join(", ")}: counted as 0`);
  return { lines, notes };
}

/** The "Quotas" section of the plan: a table to take to IAM & Admin → Quotas, then the notes. */
export function renderQuotaEstimate(estimate: QuotaEstimate): string[] {
  const scopeWidth = Math.max(...estimate.lines.map((quota) => quota.scope.length));
  const metricWidth = Math.max(...estimate.lines.map((quota) => quota.metric.length));
  const cell = (value: number | string) => String(value).padStart(12);
  return [
    "Quotas (Compute Engine; request them in IAM & Admin → Quotas before the first `pulumi up`; checked against nothing):",
    `  ${"".padEnd(scopeWidth + 2 + metricWidth)}  ${cell("min scale")}  ${cell("max scale")}  ${cell("max + surge")}`,
    ...estimate.lines.map((quota) => `  ${quota.scope.padEnd(scopeWidth)}  ${quota.metric.padEnd(metricWidth)}  ${cell(quota.min)}  ${cell(quota.max)}  ${cell(quota.maxWithSurge)}`),
    "  (max + surge: every pool at its maximum while a node upgrade adds one surge node per pool.)",
    ...estimate.notes.map((note) => `  Note: ${note}.`),
  ];
}
