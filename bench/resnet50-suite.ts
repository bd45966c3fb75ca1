import path from "node:path";
import { InferenceClient, type TensorFormat } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, type RequestSender, runAbComparison, type SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { cpuInstance, OrtBaseline } from "./ort-baseline";
import { sweepForBest } from "./sweep-for-best";

const MODEL = "resnet50";

/**
 * resnet50 (compute-bound): the server at its best concurrency against ONNX Runtime in-process at its best batch
 * size with the same intra-op threads, then the server's JSON path against the binary one. The best settings
 * come from a short sweep of each side first; the sweeps also feed the chart.
 */
export async function runResnet50Suite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const client = new InferenceClient({ url: context.serverUrl });
  try {
    const [metadata, config] = await Promise.all([client.modelMetadata(MODEL), client.modelConfig(MODEL)]);
    const input = metadata.inputs[0]!;
    const elementShape = input.shape.slice(1);
    const instances = (config.instance_group ?? []).reduce((total, group) => total + group.count, 0) || 1;
    // The server's rule: the model's intra_op_thread_count parameter, else cores divided by its instances.
    const configured = (config["parameters"] as Record<string, { string_value?: string }> | undefined)?.["intra_op_thread_count"]?.string_value;
    const intraOpThreads = configured !== undefined ? Number(configured) : Math.max(1, Math.floor(context.setup.cores / instances));
    context.notes.push(`resnet50: server ${instances} instance(s) x ${intraOpThreads} intra-op threads (${configured !== undefined ? "model parameter" : "cores / instances"}), batch-1 requests; in-process ORT: child process, the server's session options (${intraOpThreads} intra-op threads, inter-op 1, spinning off)`);
    const data = Float32Array.from({ length: elementShape.reduce((a, b) => a * b, 1) }, () => Math.random());
    const inputs = [{ name: input.name, datatype: "FP32" as const, shape: [1, ...elementShape], data }];
    const senders: Record<TensorFormat, RequestSender> = {
      binary: preparedSender(client, MODEL, inputs, { inputFormat: "binary", outputFormat: "binary" }),
      json: preparedSender(client, MODEL, inputs, { inputFormat: "json", outputFormat: "json" }),
    };
    const serverAt = (concurrency: number, format: TensorFormat, durationMs = options.windowMs) => (): Promise<SideMeasurement> =>
      measureThroughput(senders[format], { concurrency, warmupMs: options.warmupMs, durationMs });

    const baseline = await OrtBaseline.start({
      instance: cpuInstance(path.join(context.modelRepository, MODEL, "1", "model.onnx"), intraOpThreads), inputName: input.name, inputDatatype: "FP32", elementShape,
    });
    let bestConcurrency: number;
    const results: ComparisonResult[] = [];
    try {
      bestConcurrency = (await sweepForBest(context, {
        label: "resnet50 sweep: server concurrency", series: "resnet50 server (binary)", settings: options.resnet50Concurrency,
        measure: (concurrency) => serverAt(concurrency, "binary", options.calibrationWindowMs)(),
      })).setting;
      const bestBatch = (await sweepForBest(context, {
        label: "resnet50 sweep: in-process ORT batch", series: "resnet50 in-process ORT (per batch)", settings: options.resnet50BatchSizes,
        measure: (batchSize) => baseline.measure({ batchSize, warmupMs: options.warmupMs, durationMs: options.calibrationWindowMs }),
      })).setting;
      results.push(await runAbComparison(
        MODEL, `server concurrency ${bestConcurrency}, ORT batch ${bestBatch}`,
        { label: "server", measure: serverAt(bestConcurrency, "binary") },
        { label: "in-process ORT", measure: () => baseline.measure({ batchSize: bestBatch, warmupMs: options.warmupMs, durationMs: options.windowMs }) },
        options.rounds,
        (round, r) => log(`resnet50 round ${round}: server ${r.a.throughput.toFixed(1)}, in-process ORT ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
      ));
    } finally {
      await baseline.stop();
    }
    results.push(await runAbComparison(
      MODEL, `concurrency ${bestConcurrency}, tensors in and out`,
      { label: "JSON", measure: serverAt(bestConcurrency, "json") },
      { label: "binary", measure: serverAt(bestConcurrency, "binary") },
      options.rounds,
      (round, r) => log(`resnet50 round ${round}: JSON ${r.a.throughput.toFixed(1)}, binary ${r.b.throughput.toFixed(1)} infer/s (${r.ratio.toFixed(2)})`),
    ));
    return results;
  } finally {
    await client.close();
  }
}
