import { describe, expect, it } from "vitest";
import { estimateStackCost, formatMonth, machineHourPrice, renderCostEstimate } from "../../infra/plan/cost-estimate";
import { PRICE_TABLE } from "../../infra/plan/price-table";
import { estimateStackQuotas, renderQuotaEstimate } from "../../infra/plan/quota-estimate";
import { parseStackConfig, type RawStackConfig } from "../../infra/stack-config";

const context = { stack: "dev", namespace: "gpu-inference" };
const config = (raw: Omit<RawStackConfig, "project">) => parseStackConfig({ project: "my-project-1", ...raw }, context);

describe("machineHourPrice", () => {
  it("prices predefined shapes from the table's per-vCPU and per-GiB rates", () => {
    // n1-standard-4: 4 vCPUs, 15 GiB.
    expect(machineHourPrice("n1-standard-4", false)?.hour).toBeCloseTo(4 * 0.031611 + 15 * 0.004237, 6);
    expect(machineHourPrice("n1-highmem-8", true)?.hour).toBeCloseTo(8 * 0.00698 + 52 * 0.000935, 6);
    expect(machineHourPrice("e2-standard-4", false)?.hour).toBeCloseTo(4 * 0.021811 + 16 * 0.002923, 6);
    expect(machineHourPrice("c3-standard-4", false)).toBeUndefined();
  });
});

describe("estimateStackCost", () => {
  it("prices each region's GPU nodes (machine plus T4s, spot or on-demand), system nodes, cluster fee, disks and NAT, at min and max scale", () => {
    const estimate = estimateStackCost(config({
      regions: [{ name: "us-central1", zones: ["us-central1-a"], gpuPool: { machineType: "n1-standard-4", minNodes: 1, maxNodes: 3, spot: true }, systemPool: { minNodes: 1, maxNodes: 2 } }],
      autoscaling: { minReplicas: 1, maxReplicas: 2 },
    }));
    const gpu = estimate.lines.find((line) => line.item.startsWith("GPU nodes"));
    const spotNodeHour = 4 * 0.00698 + 15 * 0.000935 + 0.11;
    expect(gpu).toMatchObject({ scope: "us-central1", item: "GPU nodes: 1-3 x n1-standard-4 + 1 T4, spot" });
    expect(gpu?.minHour).toBeCloseTo(spotNodeHour, 6);
    expect(gpu?.maxHour).toBeCloseTo(3 * spotNodeHour, 6);
    expect(gpu?.note).toBe("on-demand would be $0.54/h per node");
    expect(estimate.lines.find((line) => line.item.startsWith("GKE cluster"))?.minHour).toBe(0.1);
    expect(estimate.minHour).toBeCloseTo(estimate.lines.reduce((sum, line) => sum + line.minHour, 0), 9);
    expect(estimate.maxHour).toBeGreaterThan(estimate.minHour);
    expect(estimate.notes).toEqual([]);
  });

  it("keeps the GPU nodes the HPA's minimum replicas hold, whatever gpuPool.minNodes says, and says why", () => {
    const estimate = estimateStackCost(config({
      regions: [{ name: "us-east1", zones: ["us-east1-c", "us-east1-d"], gpuPool: { minNodes: 0, maxNodes: 4 } }],
      gpusPerNode: 2,
      autoscaling: { minReplicas: 3, maxReplicas: 7 },
    }));
    expect(estimate.lines.find((line) => line.item.startsWith("GPU nodes"))?.item).toBe("GPU nodes: 2-4 x n1-standard-4 + 2 T4, on-demand");
    expect(estimate.notes).toEqual(["GPU pools never scale to zero here: autoscaling.minReplicas 3 keeps 2 GPU node(s) in us-east1 (gpuPool.minNodes alone would allow fewer)"]);
  });

  it("says that each continent pulls and reads from its own registry and bucket, and names machine types it cannot price", () => {
    const estimate = estimateStackCost(config({
      regions: [
        { name: "us-central1", zones: ["us-central1-a"] },
        { name: "europe-west4", zones: ["europe-west4-b"], systemPool: { machineType: "c3-standard-4" } },
        { name: "us-east1", zones: ["us-east1-c"] },
      ],
    }));
    expect(estimate.notes).toEqual([
      "one image repository and model bucket per continent (us/US: us-central1, us-east1; europe/EU: europe-west4): every region pulls the image and reads models on its own continent; the image is pushed to, and the models stored in, each (storage per copy, not in the totals)",
      "no price in the table for c3-standard-4: counted as $0",
    ]);
  });

  it("warns about regions whose configured registry and bucket are on another continent", () => {
    const estimate = estimateStackCost(config({
      regions: [{ name: "europe-west4", zones: ["europe-west4-b"] }],
      image: { registryLocation: "us" },
      modelRepository: { location: "US" },
    }));
    expect(estimate.notes).toEqual([
      "europe-west4 pulls the image from us and reads models from US: inter-continental egress on every image pull and model load (per GiB, not in the totals); leave image.registryLocation and modelRepository.location unset to keep them on the first region's continent",
    ]);
  });

  it("renders hourly and monthly totals, the price table's date and its sources", () => {
    const estimate = estimateStackCost(config({}));
    const text = renderCostEstimate(estimate).join("\n");
    expect(text).toContain(`as of ${PRICE_TABLE.asOf}`);
    expect(text).toMatch(new RegExp(`total per month\\s+${formatMonth(estimate.minHour).replace("$", "\\$")}\\s+${formatMonth(estimate.maxHour).replace("$", "\\$")}`));
    expect(text).toContain("https://cloud.google.com/compute/gpus-pricing");
    expect(formatMonth(1)).toBe("$730/month");
  });
});

describe("estimateStackQuotas", () => {
  it("counts vCPUs under each family's quota, T4s as spot or on-demand quota, and pd-balanced GB, per region and project-wide", () => {
    const estimate = estimateStackQuotas(config({
      regions: [
        { name: "us-central1", zones: ["us-central1-a"], gpuPool: { machineType: "n1-standard-8", minNodes: 0, maxNodes: 4, spot: true }, systemPool: { machineType: "e2-standard-2", minNodes: 1, maxNodes: 2 } },
        { name: "europe-west4", zones: ["europe-west4-b"], gpuPool: { machineType: "n1-highmem-4", minNodes: 1, maxNodes: 3 }, systemPool: { machineType: "n2-standard-6", minNodes: 1, maxNodes: 1 } },
      ],
      gpusPerNode: 2,
      autoscaling: { minReplicas: 1, maxReplicas: 5 },
    }));
    const table = estimate.lines.map((quota) => `${quota.scope} ${quota.metric} ${quota.min}/${quota.max}/${quota.maxWithSurge}`);
    expect(table).toEqual([
      // The HPA's one replica holds one GPU node even where gpuPool.minNodes is 0.
      "us-central1 CPUS 10/36/46",
      "us-central1 PREEMPTIBLE_NVIDIA_T4_GPUS 2/8/10",
      "us-central1 SSD_TOTAL_GB 200/550/700",
      // N2 has a quota of its own; CPUS_ALL_REGIONS counts every family.
      "europe-west4 CPUS 4/12/16",
      "europe-west4 N2_CPUS 6/6/12",
      "europe-west4 NVIDIA_T4_GPUS 2/6/8",
      "europe-west4 SSD_TOTAL_GB 200/400/550",
      "global CPUS_ALL_REGIONS 20/54/74",
      "global GPUS_ALL_REGIONS 4/14/18",
    ]);
    expect(estimate.notes[0]).toMatch(/spot nodes' vCPUs are counted in CPUS/);
    const rendered = renderQuotaEstimate(estimate).join("\n");
    expect(rendered).toMatch(/^Quotas \(Compute Engine/);
    expect(rendered).toMatch(/\n {2}global +CPUS_ALL_REGIONS +20 +54 +74\n/);
  });
});
