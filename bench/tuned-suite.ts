import { readFile } from "node:fs/promises";
import path from "node:path";
import { buildInputSets, type ComparisonResult } from "../tools/perf/index";
import { CandidateServer, compareServedConfigs, defaultConcurrency, describeSettings, parseTuneOptions, runInferenceTune, type TuneSummary } from "../tools/tune/index";
import type { BenchContext } from "./bench-context";

const MODELS = ["mlp", "resnet50"] as const;

/** inference-tune's result for one model: run here (quick search), or read from `--tuned-dir`. */
async function tunedResult(context: BenchContext, model: string): Promise<{ summary: TuneSummary; configText: string }> {
  const given = context.options.tunedDir;
  const dir = path.join(given ?? path.join(context.options.outDir, "tune"), model);
  if (given === undefined) {
    context.log(`tuned: inference-tune -m ${model} --quick --out ${dir}`);
    await runInferenceTune(parseTuneOptions(["-m", model, "--model-repository", context.modelRepository, "--quick", "--out", dir]), {
      stdout: { write: () => true }, stderr: { write: (text: string) => process.stderr.write(text) },
    });
  }
  const [summary, configText] = await Promise.all([readFile(path.join(dir, "summary.json"), "utf8"), readFile(path.join(dir, "config.pbtxt"), "utf8")]);
  return { summary: JSON.parse(summary) as TuneSummary, configText };
}

/**
 * What inference-tune buys: for mlp and resnet50, the config.pbtxt it wrote against the shipped one, each on its own
 * server, at the same concurrency (the tuned pick's; Model Analyzer's 2 x instances x max batch size of the shipped
 * config when the tuner kept it), alternated A/B with the bench's windows and rounds.
 */
export async function runTunedSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const results: ComparisonResult[] = [];
  for (const model of MODELS) {
    const { summary, configText } = await tunedResult(context, model);
    const modelDirectory = path.join(context.modelRepository, model);
    const shippedText = await readFile(path.join(modelDirectory, "config.pbtxt"), "utf8");
    const concurrency = summary.outcome === "tuned" && summary.pick !== undefined ? summary.pick.point.concurrency : defaultConcurrency(summary.start, 1024);
    // A batching config finishes whole batches seconds apart on 2 cores: a span needs the windows the tuner found
    // long enough for about 12 executions, and a warm-up long enough to fill the batcher.
    const tunerWindowMs = Math.max(...summary.candidates.flatMap((candidate) => candidate.points.filter((p) => p.concurrency === concurrency).map((p) => p.windowMs)), 0);
    const durationMs = Math.max(options.windowMs, tunerWindowMs);
    const warmupMs = Math.max(options.warmupMs, Math.round(tunerWindowMs / 2));
    const tunedSettings = summary.outcome === "tuned" ? summary.pick!.settings : summary.start;
    context.notes.push(`tuned ${model}: ${describeSettings(tunedSettings)} (inference-tune ${summary.mode}, ${summary.candidates.length} candidates, ${summary.outcome}) vs shipped ${describeSettings(summary.start)}, both at concurrency ${concurrency}, HTTP binary, one server each, ${warmupMs} ms warm-up and ${durationMs} ms spans`);
    results.push(await compareServedConfigs({
      start: (text) => CandidateServer.start(modelDirectory, text, { modelName: model, protocol: "http", metrics: false }),
      a: { label: "tuned config", configText }, b: { label: "shipped config", configText: shippedText },
      inputs: async (shipped) => {
        const [config, metadata] = await Promise.all([shipped.control.modelConfig(model), shipped.control.modelMetadata(model)]);
        return buildInputSets(metadata.inputs, { batchSize: 1, maxBatchSize: config.max_batch_size, shapes: new Map(), source: { kind: "random", seed: 1 } })[0]!;
      },
      concurrency, warmupMs, durationMs, name: model, setting: `concurrency ${concurrency}`, rounds: options.rounds,
      onRound: (round, r) => log(`tuned ${model} round ${round}: tuned ${r.a.throughput.toFixed(1)} (p99 ${r.a.p99Ms.toFixed(1)} ms), shipped ${r.b.throughput.toFixed(1)} infer/s (p99 ${r.b.p99Ms.toFixed(1)} ms) (${r.ratio.toFixed(2)})`),
    }));
  }
  return results;
}
