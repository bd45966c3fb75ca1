import { describe, expect, it } from "vitest";
import { quotaTable } from "./helpers/quota-table";
import { describeStackFileChecks } from "./helpers/stack-file-checks";

// The committed dev stack file, run as `pulumi up` would read it: policy pack and strict schema validation.
const run = describeStackFileChecks("dev");

describe("Pulumi.dev.yaml quotas (npm run plan)", () => {
  it("needs spot T4 quota and SSD per region, and vCPUs and GPUs project-wide: min / max / max with surge nodes", () => {
    expect(quotaTable(run().config)).toEqual([
      "us-central1 CPUS 8/24/32",
      "us-central1 PREEMPTIBLE_NVIDIA_T4_GPUS 1/3/4",
      "us-central1 SSD_TOTAL_GB 200/500/650",
      "us-east1 CPUS 8/24/32",
      "us-east1 PREEMPTIBLE_NVIDIA_T4_GPUS 1/3/4",
      "us-east1 SSD_TOTAL_GB 200/500/650",
      "global CPUS_ALL_REGIONS 16/48/64",
      "global GPUS_ALL_REGIONS 2/6/8",
    ]);
  });
});
