import { CLOUD_ARMOR_RULE_COUNT } from "../global/cloud-armor-policy";
import { isNearLocation } from "../multi-region";
import { SYSTEM_NODE_DISK_GIB } from "../region/gke-cluster";
import { GPU_NODE_DISK_GIB } from "../region/gpu-node-pool";
import { PROMETHEUS_VOLUME_GIB } from "../region/kube-prometheus-stack-values";
import { type StackConfig } from "../stack-config";
import { parseMachineType } from "./machine-types";
import { PRICE_TABLE, type PricedFamily } from "./price-table";

/** One priced item of the estimate, per hour, at the stack's smallest and largest scale. */
export interface CostLine {
  /** A region's name, or `global`. */
  readonly scope: string;
  readonly item: string;
  readonly minHour: number;
  readonly maxHour: number;
  readonly note?: string;
}

/** What `npm run plan` prints under "Cost estimate". */
export interface CostEstimate {
  readonly lines: readonly CostLine[];
  readonly minHour: number;
  readonly maxHour: number;
  /** Things the totals leave out or cannot price. */
  readonly notes: readonly string[];
}

type PredefinedShape = "standard" | "highmem" | "highcpu";
const PREDEFINED_SHAPES = new Set<string>(["standard", "highmem", "highcpu"] satisfies PredefinedShape[]);

interface MachinePrice {
  readonly hour: number;
}

/** A predefined machine type's price per hour from the table, or undefined for a family it does not price. */
export function machineHourPrice(machineType: string, spot: boolean): MachinePrice | undefined {
  const machine = parseMachineType(machineType);
  if (machine === undefined || !(machine.family in PRICE_TABLE.machineFamilies) || !PREDEFINED_SHAPES.has(machine.shape)) return undefined;
  const family = machine.family as PricedFamily;
  const vcpus = machine.vcpus;
  const memoryGib = vcpus * PRICE_TABLE.memoryGibPerVcpu[family][machine.shape as PredefinedShape];
  const rates = PRICE_TABLE.machineFamilies[family];
  const tier = spot ? "spot" : "onDemand";
  return { hour: vcpus * rates.vcpuHour[tier] + memoryGib * rates.memoryGibHour[tier] };
}

const diskHour = (gib: number) => (gib * PRICE_TABLE.balancedDiskGibMonth) / PRICE_TABLE.hoursPerMonth;

/** Fewest GPU nodes a region keeps: the pool's minimum, or what the HPA's minimum replicas need (one GPU each). */
export function minimumGpuNodes(config: Pick<StackConfig, "autoscaling" | "gpusPerNode">, minNodes: number): number {
  return Math.max(minNodes, Math.ceil(config.autoscaling.minReplicas / config.gpusPerNode));
}

function regionLines(config: StackConfig, region: StackConfig["regions"][number], unpriced: Set<string>): CostLine[] {
  const { gpuPool, systemPool } = region;
  const gpuNodeHourAt = (spot: boolean) => (machineHourPrice(gpuPool.machineType, spot)?.hour ?? 0) + config.gpusPerNode * PRICE_TABLE.t4Hour[spot ? "spot" : "onDemand"];
  const gpuNodeHour = gpuNodeHourAt(gpuPool.spot);
  const otherTierHour = gpuNodeHourAt(!gpuPool.spot);
  const systemMachine = machineHourPrice(systemPool.machineType, false);
  if (machineHourPrice(gpuPool.machineType, gpuPool.spot) === undefined) unpriced.add(gpuPool.machineType);
  if (systemMachine === undefined) unpriced.add(systemPool.machineType);
  const gpuMin = minimumGpuNodes(config, gpuPool.minNodes);
  const gpuMax = gpuPool.maxNodes;
  const nodes = (min: number, max: number) => (min === max ? `${min}` : `${min}-${max}`);
  const scope = region.name;
  return [
    {
      scope,
      item: `GPU nodes: ${nodes(gpuMin, gpuMax)} x ${gpuPool.machineType} + ${config.gpusPerNode} T4, ${gpuPool.spot ? "spot" : "on-demand"}`,
      minHour: gpuMin * gpuNodeHour,
      maxHour: gpuMax * gpuNodeHour,
      note: `${gpuPool.spot ? "on-demand" : "spot"} would be ${formatHour(otherTierHour)} per node`,
    },
    {
      scope,
      item: `system nodes: ${nodes(systemPool.minNodes, systemPool.maxNodes)} x ${systemPool.machineType}, on-demand`,
      minHour: systemPool.minNodes * (systemMachine?.hour ?? 0),
      maxHour: systemPool.maxNodes * (systemMachine?.hour ?? 0),
    },
    { scope, item: "GKE cluster management fee (regional cluster)", minHour: PRICE_TABLE.gkeClusterHour, maxHour: PRICE_TABLE.gkeClusterHour },
    {
      scope,
      item: `pd-balanced disks: ${GPU_NODE_DISK_GIB} GiB/GPU node, ${SYSTEM_NODE_DISK_GIB} GiB/system node, ${PROMETHEUS_VOLUME_GIB} GiB Prometheus`,
      minHour: diskHour(gpuMin * GPU_NODE_DISK_GIB + systemPool.minNodes * SYSTEM_NODE_DISK_GIB + PROMETHEUS_VOLUME_GIB),
      maxHour: diskHour(gpuMax * GPU_NODE_DISK_GIB + systemPool.maxNodes * SYSTEM_NODE_DISK_GIB + PROMETHEUS_VOLUME_GIB),
    },
    {
      scope,
      item: "Cloud NAT gateway (per node)",
      minHour: (gpuMin + systemPool.minNodes) * PRICE_TABLE.natVmHour,
      maxHour: Math.min(32, gpuMax + systemPool.maxNodes) * PRICE_TABLE.natVmHour,
    },
  ];
}

/**
 * What a stack costs per hour and per month at its smallest scale (the GPU pool's minimum, or the nodes the
 * HPA's minimum replicas hold, whichever is more; the system pool's minimum) and its largest (every pool at
 * its maximum), from {@link PRICE_TABLE}. Traffic-driven charges are listed, not priced.
 */
export function estimateStackCost(config: StackConfig): CostEstimate {
  const unpriced = new Set<string>();
  const forwardingRules = config.domain === undefined ? 1 : 2;
  const armorHour = (PRICE_TABLE.cloudArmor.policyMonth + CLOUD_ARMOR_RULE_COUNT * PRICE_TABLE.cloudArmor.ruleMonth) / PRICE_TABLE.hoursPerMonth;
  const lines: CostLine[] = [
    ...config.regions.flatMap((region) => regionLines(config, region, unpriced)),
    { scope: "global", item: `load balancer: ${forwardingRules} forwarding rule${forwardingRules === 1 ? "" : "s"}`, minHour: PRICE_TABLE.forwardingRulesFirstFiveHour, maxHour: PRICE_TABLE.forwardingRulesFirstFiveHour, note: "up to five cost the same" },
    { scope: "global", item: `Cloud Armor: 1 policy, ${CLOUD_ARMOR_RULE_COUNT} rules`, minHour: armorHour, maxHour: armorHour },
  ];
  const notes: string[] = [];
  const gpuNodesHeldByHpa = config.regions.filter((region) => minimumGpuNodes(config, region.gpuPool.minNodes) > region.gpuPool.minNodes);
  if (gpuNodesHeldByHpa.length > 0) {
    notes.push(`GPU pools never scale to zero here: autoscaling.minReplicas ${config.autoscaling.minReplicas} keeps ${gpuNodesHeldByHpa.map((region) => `${minimumGpuNodes(config, region.gpuPool.minNodes)} GPU node(s) in ${region.name}`).join(", ")} (gpuPool.minNodes alone would allow fewer)`);
  }
  if (config.continents.length > 1) {
    notes.push(`one image repository and model bucket per continent (${config.continents.map((continent) => `${continent.registryLocation}/${continent.bucketLocation}: ${continent.regions.join(", ")}`).join("; ")}): every region pulls the image and reads models on its own continent; the image is pushed to, and the models stored in, each (storage per copy, not in the totals)`);
  }
  for (const continent of config.continents) {
    const far = continent.regions.filter((region) => !isNearLocation(region, continent.registryLocation) || !isNearLocation(region, continent.bucketLocation));
    if (far.length > 0) {
      notes.push(`${far.join(", ")} pull${far.length === 1 ? "s" : ""} the image from ${continent.registryLocation} and read${far.length === 1 ? "s" : ""} models from ${continent.bucketLocation}: inter-continental egress on every image pull and model load (per GiB, not in the totals); leave image.registryLocation and modelRepository.location unset to keep them on the first region's continent`);
    }
  }
  if (unpriced.size > 0) notes.push(`no price in the table for ${[...unpriced].join(", ")}: counted as $0`);
  return {
    lines,
    minHour: lines.reduce((sum, line) => sum + line.minHour, 0),
    maxHour: lines.reduce((sum, line) => sum + line.maxHour, 0),
    notes,
  };
}

/** `$1.23/h`. */
function formatHour(hour: number): string {
  return `$${hour.toFixed(2)}/h`;
}

/** `$898/month`. */
export function formatMonth(hour: number): string {
  return `$${Math.round(hour * PRICE_TABLE.hoursPerMonth).toLocaleString("en-US")}/month`;
}

/** The "Cost estimate" section of the plan: one line per item, totals per hour and month, then the notes. */
export function renderCostEstimate(estimate: CostEstimate): string[] {
  const scopeWidth = Math.max(...estimate.lines.map((line) => line.scope.length));
  const width = scopeWidth + 2 + Math.max(...estimate.lines.map((line) => line.item.length));
  const cell = (text: string) => text.padStart(13);
  const lines = [
    `Cost estimate (${PRICE_TABLE.currency} list prices for ${PRICE_TABLE.region} as of ${PRICE_TABLE.asOf}, every region at those rates; ${PRICE_TABLE.hoursPerMonth} h a month):`,
    `  ${"".padEnd(width)}  ${cell("min scale")}  ${cell("max scale")}`,
    ...estimate.lines.map((line) => `  ${`${line.scope.padEnd(scopeWidth)}  ${line.item}`.padEnd(width)}  ${cell(formatHour(line.minHour))}  ${cell(formatHour(line.maxHour))}${line.note === undefined ? "" : `  (${line.note})`}`),
    `  ${"total per hour".padEnd(width)}  ${cell(formatHour(estimate.minHour))}  ${cell(formatHour(estimate.maxHour))}`,
    `  ${"total per month".padEnd(width)}  ${cell(formatMonth(estimate.minHour))}  ${cell(formatMonth(estimate.maxHour))}`,
    ...estimate.notes.map((note) => `  Note: ${note}.`),
    `  Not included (usage-based): ${PRICE_TABLE.usageBased.join("; ")}.`,
    `  Prices: ${PRICE_TABLE.sources.join("; ")}.`,
  ];
  return lines;
}
