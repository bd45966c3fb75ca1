import { existsSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./server-process";

/** Where `npm test`'s pretest (tests/setup/webgpu-on-cpu.sh) unpacks Mesa's lavapipe. */
export const SOFTWARE_GPU_DIRECTORY = path.join(REPO_ROOT, ".webgpu-on-cpu");

/**
 * The environment that gives a server process the software WebGPU adapter (what `source .webgpu-on-cpu/env.sh`
 * sets): the unpacked Vulkan loader and lavapipe's manifest. Throws with how to get it when it is not unpacked.
 */
export function softwareGpuEnvironment(): Record<string, string> {
  const root = path.join(SOFTWARE_GPU_DIRECTORY, "root");
  const manifest = path.join(root, "usr", "share", "vulkan", "icd.d", "lvp_icd.json");
  if (!existsSync(manifest)) throw new Error(`no software WebGPU adapter in ${SOFTWARE_GPU_DIRECTORY}: run bash tests/setup/webgpu-on-cpu.sh ${SOFTWARE_GPU_DIRECTORY} (npm test's pretest does)`);
  const libraries = path.join(root, "usr", "lib", "x86_64-linux-gnu");
  const inherited = process.env["LD_LIBRARY_PATH"];
  return { LD_LIBRARY_PATH: inherited ? `${libraries}:${inherited}` : libraries, VK_DRIVER_FILES: manifest };
}
