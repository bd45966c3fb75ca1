#!/usr/bin/env node
/**
 * `npm run bench`: the server against its physical limits, measured in one run on one machine (see
 * docs/benchmarks.md): resnet50 against in-process ONNX Runtime, simple against a bare fastify route, and JSON
 * against binary tensors for both, each as alternating A/B rounds. Prints the setup and a table of ratios, and
 * writes JSON, CSV and a latency-vs-throughput chart under bench/results/.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { CommanderError } from "@commander-js/extra-typings";
import { ensureExampleRepository } from "../tools/model-builder/index";
import { findPackageRoot } from "../common/find-package-root";
import { type ComparisonResult, medianThroughput, renderLatencyChart, writeChartReport } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { type BenchOptions, parseBenchOptions } from "./bench-options";
import { benchTableContent, formatBenchTable } from "./bench-table";
import { runResnet50Suite } from "./resnet50-suite";
import { countNvidiaGpus } from "../server/index";
import { runBatchingSuite } from "./batching-suite";
import { runBlsSuite } from "./bls-suite";
import { runGpuSuite } from "./gpu-suite";
import { runGpuStandinSuite } from "./gpu-standin-suite";
import { runGrpcTransportSuite } from "./grpc-transport-suite";
import { runImageTensorSuite } from "./image-tensor-suite";
import { startInferenceServerProcess } from "../tools/tune/index";
import { runMetricsOverheadSuite } from "./metrics-overhead-suite";
import { runMetricsScrapeSuite } from "./metrics-scrape-suite";
import { runImageClassifierSuite } from "./image-classifier-suite";
import { runSimpleSuite } from "./simple-suite";
import { runStreamingSuite } from "./streaming-suite";
import { runTypeScriptBackendSuite } from "./typescript-backend-suite";
import { runTunedSuite } from "./tuned-suite";
import { describeSystem } from "./system-setup";

function setupLines(context: BenchContext, startedAt: Date): string[] {
  const { setup, options } = context;
  return [
    `npm run bench${options.quick || options.gpu ? ` --${options.quick ? " --quick" : ""}${options.gpu ? " --gpu" : ""}` : ""} at ${startedAt.toISOString()}`,
    `machine: ${setup.cpuModel}, ${setup.cores} cores, ${setup.memoryGiB} GiB; Node ${setup.node}, onnxruntime-node ${setup.onnxruntime}, fastify ${setup.fastify}, undici ${setup.undici}, @grpc/grpc-js ${setup.grpcJs}, server ${setup.server}`,
    "load generator: this process, 1 JS thread, undici keep-alive pool (one connection per outstanding request), each request encoded once up front and resent (as perf_analyzer reuses its input data); server: child process, main thread + 1 ORT worker thread per model instance; both share the cores",
    ...context.notes,
    `each side: ${options.warmupMs} ms warm-up, then at least ${options.windowMs} ms measured (server sides: from one completion to the first completion that much later, so batches count whole); ${options.rounds} A/B rounds; ratio = median of per-round A/B throughput ratios, spread = min-max`,
  ];
}

function csvOf(results: readonly ComparisonResult[]): string {
  const header = "comparison,a,b,held equal,round,a infer/s,b infer/s,ratio";
  const lines = results.flatMap((result) => result.rounds.map((round, index) =>
    [result.name, result.a, result.b, `"${result.setting}"`, index + 1, round.a.throughput.toFixed(2), round.b.throughput.toFixed(2), round.ratio.toFixed(4)].join(",")));
  return [header, ...lines].join("\n") + "\n";
}

async function writeResults(context: BenchContext, results: readonly ComparisonResult[], lines: readonly string[]): Promise<void> {
  const dir = context.options.outDir;
  await mkdir(dir, { recursive: true });
  const summary = results.map((result) => ({
    ...result, medianThroughputA: medianThroughput(result, "a"), medianThroughputB: medianThroughput(result, "b"),
  }));
  await writeFile(path.join(dir, "bench-results.json"), JSON.stringify({ setup: context.setup, options: context.options, notes: lines, comparisons: summary }, null, 2) + "\n");
  await writeFile(path.join(dir, "bench-results.csv"), csvOf(results));
  if (context.chartPoints.length > 0) {
    const chart = await renderLatencyChart(context.chartPoints, "npm run bench: latency vs throughput", "log");
    await writeChartReport(dir, { title: "npm run bench", details: lines, chart, table: benchTableContent(results) });
  }
}

async function run(options: BenchOptions, root: string): Promise<void> {
  const startedAt = new Date();
  if (options.gpu && countNvidiaGpus() === 0) throw new Error("--gpu needs an NVIDIA GPU, and this machine has none (no /dev/nvidia0)");
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const modelRepository = path.join(root, "models");
  const ensured = await ensureExampleRepository(modelRepository);
  if (ensured !== "present") log(`${ensured} the example model repository in ${modelRepository}`);
  const served = options.models.filter((model) => model === "resnet50" || model === "simple");
  const server = await startInferenceServerProcess(modelRepository, [
    "--allow-metrics", "false", "--model-control-mode", "explicit", ...served.flatMap((model) => ["--load-model", model]),
  ], options.serverRoot);
  const context: BenchContext = {
    serverUrl: server.httpUrl, serverGrpcAddress: server.grpcAddress!, repositoryRoot: root, modelRepository, options,
    setup: describeSystem(root), log, notes: [], chartPoints: [],
  };
  if (options.serverRoot !== undefined) context.notes.push(`server under test: the build in ${options.serverRoot} (--server-root)`);
  log(`server ready at ${context.serverUrl} and grpc://${context.serverGrpcAddress} (pid ${server.process.pid})`);
  const results: ComparisonResult[] = [];
  try {
    if (options.models.includes("resnet50")) results.push(...(await runResnet50Suite(context)));
    if (options.models.includes("simple")) results.push(...(await runSimpleSuite(context)));
  } finally {
    await server.process.stop();
  }
  // These suites start servers of their own (other model configs, other flags).
  if (options.models.includes("mlp")) results.push(...(await runBatchingSuite(context)));
  if (options.models.includes("metrics")) results.push(...(await runMetricsOverheadSuite(context)));
  if (options.models.includes("metrics-scrape")) results.push(...(await runMetricsScrapeSuite(context)));
  if (options.models.includes("image-tensor")) results.push(...(await runImageTensorSuite(context)));
  if (options.models.includes("grpc-transport")) results.push(...(await runGrpcTransportSuite(context)));
  if (options.models.includes("image")) results.push(...(await runImageClassifierSuite(context)));
  if (options.models.includes("typescript")) results.push(...(await runTypeScriptBackendSuite(context)));
  if (options.models.includes("streaming")) results.push(...(await runStreamingSuite(context)));
  if (options.models.includes("bls")) results.push(...(await runBlsSuite(context)));
  if (options.models.includes("tuned")) results.push(...(await runTunedSuite(context)));
  if (options.models.includes("gpu-standin")) results.push(...(await runGpuStandinSuite(context)));
  if (options.gpu) results.push(...(await runGpuSuite(context)));
  const lines = setupLines(context, startedAt);
  process.stdout.write(`\n${lines.join("\n")}\n\n${formatBenchTable(results)}`);
  await writeResults(context, results, lines);
  process.stdout.write(`\nfinished in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s; results in ${options.outDir}\n`);
}

const root = findPackageRoot(__dirname);
let options: BenchOptions;
try {
  options = parseBenchOptions(process.argv.slice(2), root);
} catch (error) {
  process.exit(error instanceof CommanderError ? error.exitCode : 2);
}
run(options, root).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
