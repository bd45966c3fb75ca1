import { mainThreadCpuMs, type RequestSender, type SideMeasurement, summarizeRatios } from "../tools/perf/index";

/**
 * The server's main-thread CPU per request, side by side with throughput: the budget that decides whether the event
 * loop or the model is the limit (at 900 images/s on a GPU, 1.1 ms per request). Steady on a noisy machine where
 * throughput is not. Each measurement counts the requests it sends, warmup included, against the CPU the server's
 * main thread used meanwhile.
 */
export class MainThreadCpuPerRequest {
  readonly #msPerRequest = new Map<string, number[]>();

  /** `cpuMs` reads the CPU time to charge: by default the server main thread's (`serverPid`). */
  constructor(serverPid: number, private readonly cpuMs: () => number = () => mainThreadCpuMs(serverPid)) {}

  /** Runs `measure` with a counting `send`, recording the server's main-thread ms per request under `label`. */
  async measure(label: string, send: RequestSender, measure: (send: RequestSender) => Promise<SideMeasurement>): Promise<SideMeasurement> {
    let sent = 0;
    const counted: RequestSender = () => {
      sent++;
      return send();
    };
    return (await this.measureCounted(label, async () => ({ measured: await measure(counted), sent }))).measured;
  }

  /** Runs `measure`, which counts the requests it sends itself (in other processes), recording as {@link measure} does. */
  async measureCounted<Measured extends { readonly sent: number }>(label: string, measure: () => Promise<Measured>): Promise<Measured> {
    const before = this.cpuMs();
    const measured = await measure();
    if (measured.sent === 0) return measured;
    const values = this.#msPerRequest.get(label) ?? [];
    values.push((this.cpuMs() - before) / measured.sent);
    this.#msPerRequest.set(label, values);
    return measured;
  }

  /** The median ms per request measured under `label`, or undefined before any. */
  medianMs(label: string): number | undefined {
    const values = this.#msPerRequest.get(label);
    return values === undefined ? undefined : summarizeRatios(values).median;
  }

  /** `gRPC 0.850 (0.800-0.910) ms, HTTP binary ...`: each label's median and range over its measurements. */
  summary(): string {
    return [...this.#msPerRequest].map(([label, values]) => {
      const { median, min, max } = summarizeRatios(values);
      return `${label} ${median.toFixed(3)} (${min.toFixed(3)}-${max.toFixed(3)}) ms`;
    }).join(", ");
  }
}
