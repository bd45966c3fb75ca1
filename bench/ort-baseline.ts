import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import type { InstanceSpec } from "../server/index";
import { type SideMeasurement, summarizeLatencies } from "../tools/perf/index";
import { nextChildMessage, stopChild } from "./child-messages";
import type { OrtBaselineMessage, OrtBaselineRequest, OrtBaselineSettings } from "./ort-baseline-protocol";

/** A KIND_CPU instance of a model file with the server's defaults but `intraOpThreads` (for the baseline's session). */
export function cpuInstance(modelPath: string, intraOpThreads: number): InstanceSpec {
  return {
    modelName: path.basename(path.dirname(path.dirname(modelPath))), modelVersion: 1, modelPath, instanceName: "baseline",
    modelDirectory: path.dirname(path.dirname(modelPath)), modelConfig: {},
    device: "cpu", deviceId: 0, accelerators: [], parameters: {}, intraOpThreads, graphOptimizationLevel: 0,
  };
}

/**
 * The in-process ONNX Runtime baseline, run in a child process of its own so that, like the server's worker
 * thread, its synchronous run() blocks nobody else and it gets the CPU to itself while it measures.
 */
export class OrtBaseline {
  readonly #child: ChildProcess;

  private constructor(child: ChildProcess) {
    this.#child = child;
  }

  static async start(settings: OrtBaselineSettings): Promise<OrtBaseline> {
    const child = fork(path.join(__dirname, "ort-baseline-process.js"), [JSON.stringify(settings)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const baseline = new OrtBaseline(child);
    await baseline.#next();
    return baseline;
  }

  /** Runs batches of `batchSize` back to back for `durationMs` after `warmupMs`; throughput is images per second. */
  async measure(request: OrtBaselineRequest): Promise<SideMeasurement> {
    const reply = this.#next();
    this.#child.send(request);
    const message = await reply;
    if (message.type !== "measured") throw new Error(`unexpected message from the ORT baseline: ${message.type}`);
    const latency = summarizeLatencies(message.runLatenciesNs);
    const ms = (p: number): number => (latency.percentilesNs.get(p) ?? 0) / 1e6;
    return { throughput: (message.runLatenciesNs.length * message.batchSize) / (message.durationNs / 1e9), p50Ms: ms(50), p90Ms: ms(90), p99Ms: ms(99) };
  }

  stop(): Promise<void> {
    return stopChild(this.#child);
  }

  #next(): Promise<Exclude<OrtBaselineMessage, { type: "failed" }>> {
    return nextChildMessage<OrtBaselineMessage>(this.#child, "ORT baseline");
  }
}
