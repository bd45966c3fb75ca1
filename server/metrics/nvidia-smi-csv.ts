/** The nvidia-smi arguments whose output {@link parseNvidiaSmiCsv} reads. */
export const NVIDIA_SMI_QUERY_ARGS: readonly string[] = [
  "--query-gpu=uuid,utilization.gpu,memory.total,memory.used",
  "--format=csv,noheader,nounits",
];

/** One GPU as nvidia-smi reports it; a field the GPU does not report (`[N/A]`, `[Not Supported]`) is undefined. */
export interface GpuReading {
  readonly uuid: string;
  /** 0..1 (nvidia-smi reports percent). */
  readonly utilization: number | undefined;
  readonly memoryTotalBytes: number | undefined;
  readonly memoryUsedBytes: number | undefined;
}

const MIB = 1024 * 1024;

function numberOrUndefined(field: string | undefined): number | undefined {
  if (field === undefined || field === "" || field.startsWith("[")) return undefined;
  const n = Number(field);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Parses the output of `nvidia-smi` run with {@link NVIDIA_SMI_QUERY_ARGS}: one `uuid, percent, MiB, MiB` line per
 * GPU. Lines without a GPU UUID (blank lines, error text) are skipped.
 */
export function parseNvidiaSmiCsv(text: string): GpuReading[] {
  const readings: GpuReading[] = [];
  for (const line of text.split("\n")) {
    const [uuid, utilization, total, used] = line.split(",").map((field) => field.trim());
    if (uuid === undefined || !uuid.startsWith("GPU-")) continue;
    const percent = numberOrUndefined(utilization);
    const totalMib = numberOrUndefined(total);
    const usedMib = numberOrUndefined(used);
    readings.push({
      uuid,
      utilization: percent === undefined ? undefined : percent / 100,
      memoryTotalBytes: totalMib === undefined ? undefined : totalMib * MIB,
      memoryUsedBytes: usedMib === undefined ? undefined : usedMib * MIB,
    });
  }
  return readings;
}
