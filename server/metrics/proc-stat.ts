/** Cumulative CPU time of all cores from the `cpu` line of `/proc/stat`, in clock ticks. */
export interface CpuTimes {
  readonly idleTicks: number;
  readonly totalTicks: number;
}

/**
 * Parses the aggregate `cpu` line of `/proc/stat`. Idle time is idle + iowait, as Triton counts it; guest time is
 * already inside user time, so the total stops at steal. Throws when the line is missing or malformed.
 */
export function parseProcStat(text: string): CpuTimes {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  const fields = line?.trim().split(/\s+/).slice(1, 9).map(Number) ?? [];
  if (fields.length < 4 || fields.some((n) => !Number.isFinite(n))) throw new Error("/proc/stat has no valid aggregate 'cpu' line");
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { idleTicks: idle + iowait, totalTicks: user + nice + system + idle + iowait + irq + softirq + steal };
}

/** Busy fraction (0..1) of all cores between two readings; 0 when no time passed. */
export function cpuUtilizationBetween(previous: CpuTimes, current: CpuTimes): number {
  const total = current.totalTicks - previous.totalTicks;
  if (total <= 0) return 0;
  const busy = total - (current.idleTicks - previous.idleTicks);
  return Math.min(1, Math.max(0, busy / total));
}
