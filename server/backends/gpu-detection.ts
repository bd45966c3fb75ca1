import { readdirSync } from "node:fs";

/** NVIDIA GPUs visible to this process, counted from the device nodes the driver creates. */
export function countNvidiaGpus(): number {
  try {
    return readdirSync("/dev").filter((name) => /^nvidia[0-9]+$/.test(name)).length;
  } catch {
    return 0;
  }
}
