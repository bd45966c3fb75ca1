import { existsSync, readdirSync } from "node:fs";
import path from "node:path";

/** NVIDIA GPUs visible to this process, counted from the device nodes the driver creates. */
export function countNvidiaGpus(): number {
  try {
    return readdirSync("/dev").filter((name) => /^nvidia[0-9]+$/.test(name)).length;
  } catch {
    return 0;
  }
}

/**
 * Vulkan drivers that run on the CPU (Mesa's lavapipe, Google's SwiftShader), as the Vulkan loader's
 * `VK_LOADER_DRIVERS_DISABLE` globs match their ICD manifest file names.
 */
export const SOFTWARE_VULKAN_DRIVER_GLOBS = ["*lvp_icd*", "*swiftshader_icd*"] as const;
const SOFTWARE_ICD = /(lvp|swiftshader)_icd[^/]*\.json$/;
/** Where the Vulkan loader looks for driver manifests when no environment variable names them. */
const ICD_DIRECTORIES = ["/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/etc/vulkan/icd.d"];

/** The GPUs the server may place KIND_GPU and KIND_AUTO instances on. */
export interface GpuInventory {
  readonly count: number;
  /**
   * The software Vulkan driver's manifest when the only GPU is a software WebGPU adapter (`--allow-software-gpu`
   * on a machine without an NVIDIA GPU); undefined for real GPUs or none.
   */
  readonly softwareAdapter: string | undefined;
}

/** The software Vulkan driver manifest the loader would find (the variables' list first, as the loader reads them). */
export function findSoftwareVulkanDriver(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const listed = (env["VK_DRIVER_FILES"] ?? env["VK_ICD_FILENAMES"])?.split(":").filter((file) => file !== "");
  const candidates = listed ?? ICD_DIRECTORIES.flatMap((directory) => {
    try {
      return readdirSync(directory).map((name) => path.join(directory, name));
    } catch {
      return [];
    }
  });
  return candidates.find((file) => SOFTWARE_ICD.test(file) && existsSync(file));
}

/**
 * The GPUs of this machine: its NVIDIA GPUs; where there are none and `allowSoftwareGpu`, one software WebGPU
 * adapter if a software Vulkan driver is installed (tests and users without a GPU run the GPU code path on it).
 */
export function detectGpus(allowSoftwareGpu: boolean, env: NodeJS.ProcessEnv = process.env, nvidiaGpus = countNvidiaGpus()): GpuInventory {
  if (nvidiaGpus > 0 || !allowSoftwareGpu) return { count: nvidiaGpus, softwareAdapter: undefined };
  const driver = findSoftwareVulkanDriver(env);
  return driver === undefined ? { count: 0, softwareAdapter: undefined } : { count: 1, softwareAdapter: driver };
}

/**
 * Keeps ONNX Runtime's WebGPU provider off software Vulkan drivers (unless `--allow-software-gpu`): without this a
 * KIND_GPU model on a machine that happens to have Mesa's lavapipe installed would run, very slowly, on the CPU.
 * Must run before the first WebGPU session: the Vulkan loader reads the variable when the provider starts.
 */
export function hideSoftwareVulkanDrivers(env: NodeJS.ProcessEnv = process.env): void {
  const current = env["VK_LOADER_DRIVERS_DISABLE"];
  const globs = [...(current ? current.split(",") : []), ...SOFTWARE_VULKAN_DRIVER_GLOBS.filter((glob) => !current?.split(",").includes(glob))];
  env["VK_LOADER_DRIVERS_DISABLE"] = globs.join(",");
}
