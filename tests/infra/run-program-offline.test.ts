import * as gcp from "@pulumi/gcp";
import { describe, expect, it } from "vitest";
import { runProgramOffline } from "../../infra/plan/run-program-offline";

describe("runProgramOffline", () => {
  it("rejects with the program's own error, once, after what it declared has settled", async () => {
    const run = runProgramOffline(() => {
      new gcp.compute.Network("declared-before-the-error", { autoCreateSubnetworks: false });
      throw new Error("gpu-inference:regions[0].zones[0]: zone us-west1-a is not in region us-east1");
    }, { project: "gpu-inference", stack: "test" });
    // vitest fails the run on any unhandled rejection, so a second report of this error would show.
    await expect(run).rejects.toThrow("gpu-inference:regions[0].zones[0]: zone us-west1-a is not in region us-east1");
  });
});
