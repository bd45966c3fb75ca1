/** Host memory from `/proc/meminfo`, in bytes. */
export interface HostMemory {
  readonly totalBytes: number;
  readonly usedBytes: number;
}

/**
 * Parses `/proc/meminfo` as Triton does: used = MemTotal - MemAvailable (so page cache the kernel can reclaim is not
 * "used"). Throws when either field is missing.
 */
export function parseProcMeminfo(text: string): HostMemory {
  const kibibytes = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(text);
    if (match === null) throw new Error(`/proc/meminfo has no ${field} line`);
    return Number(match[1]) * 1024;
  };
  const totalBytes = kibibytes("MemTotal");
  return { totalBytes, usedBytes: totalBytes - kibibytes("MemAvailable") };
}
