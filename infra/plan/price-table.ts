/**
 * The list prices `npm run plan` estimates a stack's cost from: Google Cloud's public prices for us-central1,
 * in USD, before taxes, committed-use or sustained-use discounts. Other regions cost somewhat more (Europe
 * and Asia typically 5-25%); the estimate prices every region at these rates and says so. Spot prices move
 * (Google may change them daily); the figures are typical spot rates, not a quote.
 *
 * Update the figures and `asOf` together, from the pages in `sources`.
 */
export const PRICE_TABLE = {
  asOf: "2026-11-23",
  region: "us-central1",
  currency: "USD",
  sources: [
    "https://cloud.google.com/compute/vm-instance-pricing (N1, E2, N2 vCPU and memory)",
    "https://cloud.google.com/compute/gpus-pricing (NVIDIA T4)",
    "https://cloud.google.com/spot-vms/pricing (spot vCPU, memory and T4)",
    "https://cloud.google.com/compute/disks-image-pricing (pd-balanced)",
    "https://cloud.google.com/kubernetes-engine/pricing (cluster management fee)",
    "https://cloud.google.com/vpc/network-pricing (forwarding rules, Cloud NAT)",
    "https://cloud.google.com/armor/pricing (Cloud Armor Standard)",
  ],
  hoursPerMonth: 730,
  /** Per vCPU-hour and per GiB-hour of memory, by machine family. */
  machineFamilies: {
    n1: { vcpuHour: { onDemand: 0.031611, spot: 0.00698 }, memoryGibHour: { onDemand: 0.004237, spot: 0.000935 } },
    n2: { vcpuHour: { onDemand: 0.031611, spot: 0.00742 }, memoryGibHour: { onDemand: 0.004237, spot: 0.000994 } },
    e2: { vcpuHour: { onDemand: 0.021811, spot: 0.006543 }, memoryGibHour: { onDemand: 0.002923, spot: 0.000877 } },
  },
  /** GiB of memory per vCPU of each predefined shape. */
  memoryGibPerVcpu: {
    n1: { standard: 3.75, highmem: 6.5, highcpu: 0.9 },
    n2: { standard: 4, highmem: 8, highcpu: 1 },
    e2: { standard: 4, highmem: 8, highcpu: 1 },
  },
  /** One NVIDIA T4, per hour. */
  t4Hour: { onDemand: 0.35, spot: 0.11 },
  /** pd-balanced, per GiB-month. */
  balancedDiskGibMonth: 0.1,
  /** GKE Standard cluster management fee, per cluster-hour (the free tier covers one zonal cluster, not regional ones). */
  gkeClusterHour: 0.1,
  /** Global external Application Load Balancer forwarding rules: the first five together, per hour. */
  forwardingRulesFirstFiveHour: 0.025,
  /** Cloud NAT, per VM-hour of the VMs using the gateway (up to 32 VMs, then capped). */
  natVmHour: 0.0014,
  /** Cloud Armor Standard, per month. */
  cloudArmor: { policyMonth: 5, ruleMonth: 1 },
  /** What scales with traffic and is therefore not in the totals. */
  usageBased: [
    "load balancer data processed ($0.008/GiB) and Cloud Armor requests ($0.75 per million)",
    "Cloud NAT data processed ($0.045/GiB) and internet egress",
    "Cloud Logging beyond the free 50 GiB a month ($0.50/GiB): load balancer logs (loadBalancer.logSampleRate), VPC flow logs (vpc.flowLogSampleRate)",
    "Managed Service for Prometheus samples (GKE's DCGM metrics)",
    "Artifact Registry storage ($0.10/GiB-month; the CUDA image is several GiB: tagged images are deleted after 30 days except the 10 newest, untagged after 7, the build cache is kept) and Cloud Storage for the models",
  ],
} as const;

/** A machine family the table prices. */
export type PricedFamily = keyof typeof PRICE_TABLE.machineFamilies;
