import { describe, expect, it } from "vitest";
import { quotaTable } from "./helpers/quota-table";
import { describeStackFileChecks } from "./helpers/stack-file-checks";

// The committed production example, run as `pulumi up` would read it: policy pack and strict schema validation.
const run = describeStackFileChecks("prod");

describe("Pulumi.prod.yaml quotas (npm run plan)", () => {
  // Issue 39, item 2: a new project's CPUS_ALL_REGIONS and SSD_TOTAL_GB can stop the first prod run.
  it("needs 60 vCPUs project-wide at minimum scale and 200 at maximum, and about 1 TB of SSD per region at maximum", () => {
    expect(quotaTable(run().config)).toEqual([
      "us-central1 CPUS 20/64/76",
      "us-central1 NVIDIA_T4_GPUS 2/7/8",
      "us-central1 SSD_TOTAL_GB 300/850/1000",
      "us-east1 CPUS 20/68/80",
      "us-east1 NVIDIA_T4_GPUS 2/7/8",
      "us-east1 SSD_TOTAL_GB 300/900/1050",
      "europe-west4 CPUS 20/68/80",
      "europe-west4 NVIDIA_T4_GPUS 2/7/8",
      "europe-west4 SSD_TOTAL_GB 300/900/1050",
      "global CPUS_ALL_REGIONS 60/200/236",
      "global GPUS_ALL_REGIONS 6/21/24",
    ]);
  });
});
