import { readFileSync } from "node:fs";
import { Gauge, type Registry } from "prom-client";
import { parseProcMeminfo } from "./proc-meminfo";
import { cpuUtilizationBetween, type CpuTimes, parseProcStat } from "./proc-stat";

/** Reads a file under /proc; injectable so tests can feed fixed text. */
export type ProcReader = (file: "/proc/stat" | "/proc/meminfo") => string;

const readProc: ProcReader = (file) => readFileSync(file, "utf8");

/**
 * Triton's host metrics, without labels: `nv_cpu_utilization` (0..1, all cores, over the last sampling interval,
 * from /proc/stat) and `nv_cpu_memory_total_bytes` / `nv_cpu_memory_used_bytes` (from /proc/meminfo). Like
 * Triton's, they describe the host (or the container's view of /proc), not this process.
 */
export class HostMetrics {
  readonly #read: ProcReader;
  readonly #utilization: Gauge;
  readonly #memoryTotal: Gauge;
  readonly #memoryUsed: Gauge;
  #previousCpu: CpuTimes;

  private constructor(registry: Registry, read: ProcReader, firstCpu: CpuTimes) {
    const registers = [registry];
    this.#read = read;
    this.#previousCpu = firstCpu;
    this.#utilization = new Gauge({ name: "nv_cpu_utilization", help: "CPU utilization rate [0.0 - 1.0]", registers });
    this.#memoryTotal = new Gauge({ name: "nv_cpu_memory_total_bytes", help: "CPU total memory (RAM), in bytes", registers });
    this.#memoryUsed = new Gauge({ name: "nv_cpu_memory_used_bytes", help: "CPU used memory (RAM), in bytes", registers });
  }

  /**
   * Registers the host gauges and takes the first reading (memory now; CPU utilization from the next
   * {@link HostMetrics.sample}, which needs two readings). Returns undefined, registering nothing, where /proc
   * cannot be read (not Linux).
   */
  static start(registry: Registry, read: ProcReader = readProc): HostMetrics | undefined {
    let firstCpu: CpuTimes;
    try {
      firstCpu = parseProcStat(read("/proc/stat"));
      parseProcMeminfo(read("/proc/meminfo"));
    } catch {
      return undefined;
    }
    const metrics = new HostMetrics(registry, read, firstCpu);
    metrics.#sampleMemory();
    return metrics;
  }

  /** Updates every gauge; a failed read keeps the previous values. */
  sample(): void {
    try {
      const cpu = parseProcStat(this.#read("/proc/stat"));
      this.#utilization.set(cpuUtilizationBetween(this.#previousCpu, cpu));
      this.#previousCpu = cpu;
      this.#sampleMemory();
    } catch {
      // /proc does not vanish on a live Linux host; a transient read error is retried next interval.
    }
  }

  #sampleMemory(): void {
    const memory = parseProcMeminfo(this.#read("/proc/meminfo"));
    this.#memoryTotal.set(memory.totalBytes);
    this.#memoryUsed.set(memory.usedBytes);
  }
}
