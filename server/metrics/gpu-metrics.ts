import { execFile } from "node:child_process";
import { Gauge, type Registry } from "prom-client";
import { type GpuReading, NVIDIA_SMI_QUERY_ARGS, parseNvidiaSmiCsv } from "./nvidia-smi-csv";

/** Runs nvidia-smi with the given arguments and resolves with its stdout; injectable for tests. */
export type NvidiaSmiRunner = (args: readonly string[], timeoutMs: number) => Promise<string>;

const runNvidiaSmi: NvidiaSmiRunner = (args, timeoutMs) =>
  new Promise((resolve, reject) => {
    execFile("nvidia-smi", [...args], { timeout: timeoutMs, windowsHide: true }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });

/** Bounds one nvidia-smi run; with one run at a time, a hung driver costs one process, not one per interval. */
const NVIDIA_SMI_TIMEOUT_MS = 10_000;

type GpuLabel = "gpu_uuid";

interface GpuGauges {
  readonly utilization: Gauge<GpuLabel>;
  readonly memoryTotal: Gauge<GpuLabel>;
  readonly memoryUsed: Gauge<GpuLabel>;
}

/**
 * Triton's GPU gauges, one series per GPU (label `gpu_uuid`): `nv_gpu_utilization` (0..1), `nv_gpu_memory_total_bytes`,
 * `nv_gpu_memory_used_bytes`. Triton reads DCGM; we run `nvidia-smi --query-gpu=...` once per sampling interval
 * (off the event loop, in a child process). Where nvidia-smi is not installed the metrics are absent: nothing is
 * registered until a sample lists a GPU, and a missing binary stops sampling for good.
 */
export class GpuMetrics {
  readonly #registry: Registry;
  readonly #run: NvidiaSmiRunner;
  #gauges: GpuGauges | undefined;
  #nvidiaSmiMissing = false;
  #sampling: Promise<void> | undefined;

  constructor(registry: Registry, run: NvidiaSmiRunner = runNvidiaSmi) {
    this.#registry = registry;
    this.#run = run;
  }

  /** Runs nvidia-smi and replaces every GPU series; resolves (never rejects) once done. At most one run at a time. */
  sample(): Promise<void> {
    if (this.#nvidiaSmiMissing) return Promise.resolve();
    this.#sampling ??= this.#sampleOnce().finally(() => (this.#sampling = undefined));
    return this.#sampling;
  }

  async #sampleOnce(): Promise<void> {
    let readings: GpuReading[];
    try {
      readings = parseNvidiaSmiCsv(await this.#run(NVIDIA_SMI_QUERY_ARGS, NVIDIA_SMI_TIMEOUT_MS));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") this.#nvidiaSmiMissing = true;
      // A failing driver query drops the series rather than exporting stale numbers.
      readings = [];
    }
    if (readings.length === 0 && this.#gauges === undefined) return;
    const gauges = (this.#gauges ??= this.#register());
    for (const gauge of Object.values(gauges)) gauge.reset();
    for (const reading of readings) {
      const labels = { gpu_uuid: reading.uuid };
      if (reading.utilization !== undefined) gauges.utilization.set(labels, reading.utilization);
      if (reading.memoryTotalBytes !== undefined) gauges.memoryTotal.set(labels, reading.memoryTotalBytes);
      if (reading.memoryUsedBytes !== undefined) gauges.memoryUsed.set(labels, reading.memoryUsedBytes);
    }
  }

  #register(): GpuGauges {
    const registers = [this.#registry];
    const labelNames: GpuLabel[] = ["gpu_uuid"];
    return {
      utilization: new Gauge({ name: "nv_gpu_utilization", help: "GPU utilization rate [0.0 - 1.0)", labelNames, registers }),
      memoryTotal: new Gauge({ name: "nv_gpu_memory_total_bytes", help: "GPU total memory, in bytes", labelNames, registers }),
      memoryUsed: new Gauge({ name: "nv_gpu_memory_used_bytes", help: "GPU used memory, in bytes", labelNames, registers }),
    };
  }
}
