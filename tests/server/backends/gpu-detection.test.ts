import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectGpus, findSoftwareVulkanDriver, hideSoftwareVulkanDrivers } from "../../../server/backends/gpu-detection";

describe("GPU detection with --allow-software-gpu", () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), "icd-"));
  const lavapipe = path.join(directory, "lvp_icd.json");
  const nvidia = path.join(directory, "nvidia_icd.json");
  writeFileSync(lavapipe, "{}");
  writeFileSync(nvidia, "{}");
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("counts NVIDIA GPUs only, flag or not, where there are some", () => {
    expect(detectGpus(false, { VK_DRIVER_FILES: lavapipe }, 2)).toEqual({ count: 2, softwareAdapter: undefined });
    expect(detectGpus(true, { VK_DRIVER_FILES: lavapipe }, 1)).toEqual({ count: 1, softwareAdapter: undefined });
  });

  it("counts a software adapter as GPU 0 only with the flag, on a machine without an NVIDIA GPU", () => {
    expect(detectGpus(false, { VK_DRIVER_FILES: lavapipe }, 0)).toEqual({ count: 0, softwareAdapter: undefined });
    expect(detectGpus(true, { VK_DRIVER_FILES: `${nvidia}:${lavapipe}` }, 0)).toEqual({ count: 1, softwareAdapter: lavapipe });
    expect(detectGpus(true, { VK_ICD_FILENAMES: lavapipe }, 0)).toEqual({ count: 1, softwareAdapter: lavapipe });
    expect(detectGpus(true, { VK_DRIVER_FILES: nvidia }, 0)).toEqual({ count: 0, softwareAdapter: undefined });
  });

  it("finds no software driver whose manifest is listed but missing", () => {
    expect(findSoftwareVulkanDriver({ VK_DRIVER_FILES: path.join(directory, "gone", "lvp_icd.json") })).toBeUndefined();
  });

  it("hides software drivers from the Vulkan loader, keeping what the operator disabled", () => {
    const env: NodeJS.ProcessEnv = {};
    hideSoftwareVulkanDrivers(env);
    expect(env["VK_LOADER_DRIVERS_DISABLE"]).toBe("*lvp_icd*,*swiftshader_icd*");
    const operator: NodeJS.ProcessEnv = { VK_LOADER_DRIVERS_DISABLE: "*radeon*,*lvp_icd*" };
    hideSoftwareVulkanDrivers(operator);
    expect(operator["VK_LOADER_DRIVERS_DISABLE"]).toBe("*radeon*,*lvp_icd*,*swiftshader_icd*");
  });
});
