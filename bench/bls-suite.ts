import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, type RequestSender, runAbComparison, type SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { sweepForBest } from "./sweep-for-best";
import { startInferenceServerProcess } from "../tools/tune/index";

const PHOTOS = ["mug.jpg", "kitten_224.png", "fish.png", "vulture.jpeg"];
/** Calls per request to the call-loop model: the request around them is spread over this many. */
const CALLS_PER_REQUEST = 50;

function identityConfig(name: string, backend: string): string {
  return [
    `name: "${name}"`, `backend: "${backend}"`, "max_batch_size: 8",
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]', 'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n");
}

/** `measure`'s throughput and latencies per call, for a sender whose every request makes `calls` calls. */
async function perCall(measure: Promise<SideMeasurement>, calls: number): Promise<SideMeasurement> {
  const m = await measure;
  return { throughput: m.throughput * calls, p50Ms: m.p50Ms / calls, p90Ms: m.p90Ms / calls, p99Ms: m.p99Ms / calls };
}

/**
 * The same image pipeline as the image_classifier ensemble and as image_classifier_bls, a TypeScript model calling
 * its three models (min_confidence 0: one pass, exactly the ensemble's steps), each at its best concurrency.
 */
async function pipelineComparison(context: BenchContext): Promise<ComparisonResult> {
  const { options, log } = context;
  const server = await startInferenceServerProcess(context.modelRepository, [
    "--allow-metrics", "false", "--allow-grpc", "false", "--model-control-mode", "explicit", "--load-model", "image_classifier", "--load-model", "image_classifier_bls",
  ], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  try {
    const photos = PHOTOS.map((name) => new Uint8Array(readFileSync(path.join(context.repositoryRoot, "..", "shared", "data", "images", name))));
    const senderFor = (model: string): RequestSender => {
      const prepared = photos.map((photo) => client.prepareInfer(model, [{ name: "IMAGE", datatype: "BYTES", shape: [1, 1], data: [photo] }], {
        outputs: ["CLASSES"], ...(model === "image_classifier_bls" ? { parameters: { min_confidence: 0 } } : {}),
      }));
      let next = 0;
      return async () => {
        const result = await client.inferPrepared(prepared[next++ % prepared.length]!);
        return { sendNs: result.timing.sendNs, receiveNs: result.timing.receiveNs };
      };
    };
    const at = (send: RequestSender, concurrency: number, durationMs = options.windowMs) => (): Promise<SideMeasurement> =>
      measureThroughput(send, { concurrency, warmupMs: options.warmupMs, durationMs });
    const bls = senderFor("image_classifier_bls");
    const ensemble = senderFor("image_classifier");
    const sweep = async (label: string, send: RequestSender): Promise<number> => (await sweepForBest(context, {
      label: `bls sweep: ${label} concurrency`, series: `bls: ${label}`, unit: "images/s", settings: options.imageConcurrency,
      measure: (concurrency) => at(send, concurrency, options.calibrationWindowMs)(),
    })).setting;
    const blsConcurrency = await sweep("BLS model", bls);
    const ensembleConcurrency = await sweep("ensemble", ensemble);
    context.notes.push(
      `bls pipeline: ${PHOTOS.join(", ")} in turn, HTTP binary; image_classifier_bls (min_confidence 0: preprocess, squeezenet, postprocess, as the ensemble) vs the image_classifier ensemble, configs as generated, each at its best concurrency of ${options.imageConcurrency.join(",")}`,
    );
    return await runAbComparison(
      "image pipeline: BLS / ensemble", `BLS concurrency ${blsConcurrency}, ensemble concurrency ${ensembleConcurrency}`,
      { label: "BLS model", measure: at(bls, blsConcurrency) },
      { label: "ensemble", measure: at(ensemble, ensembleConcurrency) },
      options.rounds,
      (round, r) => log(`bls pipeline round ${round}: BLS ${r.a.throughput.toFixed(1)}, ensemble ${r.b.throughput.toFixed(1)} images/s (${r.ratio.toFixed(2)})`),
    );
  } finally {
    await client.close();
    await server.process.stop();
  }
}

/**
 * One BLS call to a trivial model (the built-in identity backend, FP32 [1,16]) against one HTTP request to it, at
 * concurrency 1: a call-loop model makes 50 calls in a row per request, its throughput counted in calls.
 */
async function callOverheadComparison(context: BenchContext): Promise<ComparisonResult> {
  const { options, log } = context;
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-bls-"));
  for (const [name, backend] of [["identity", "identity"], ["call_loop", "typescript"]] as const) {
    mkdirSync(path.join(repository, name, "1"), { recursive: true });
    writeFileSync(path.join(repository, name, "config.pbtxt"), identityConfig(name, backend));
  }
  copyFileSync(path.join(__dirname, "bls-call-loop-model.js"), path.join(repository, "call_loop", "1", "model.js"));
  const server = await startInferenceServerProcess(repository, ["--allow-metrics", "false", "--allow-grpc", "false"], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  try {
    const inputs: InferInput[] = [{ name: "INPUT0", datatype: "FP32", shape: [1, 16], data: Float32Array.from({ length: 16 }, (_, i) => i) }];
    const load = { concurrency: 1, warmupMs: options.warmupMs, durationMs: options.windowMs };
    const loop = preparedSender(client, "call_loop", inputs, { parameters: { calls: CALLS_PER_REQUEST } });
    const direct = preparedSender(client, "identity", inputs);
    context.notes.push(
      `bls call: identity FP32 [1,16] (built-in backend), concurrency 1, HTTP binary; a TypeScript model making ${CALLS_PER_REQUEST} calls to it in a row per request (calls/s, latency per call) vs HTTP requests to it`,
    );
    return await runAbComparison(
      "identity: BLS call / HTTP request", `concurrency 1, ${CALLS_PER_REQUEST} calls per BLS request`,
      { label: "BLS call", measure: () => perCall(measureThroughput(loop, load), CALLS_PER_REQUEST) },
      { label: "HTTP request", measure: () => measureThroughput(direct, load) },
      options.rounds,
      (round, r) => log(`bls call round ${round}: ${(1e6 / r.a.throughput).toFixed(1)} us per BLS call, ${(1e6 / r.b.throughput).toFixed(1)} us per HTTP request (${r.ratio.toFixed(2)})`),
    );
  } finally {
    await client.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}

/** What calling models from a model (BLS) costs: a pipeline against its ensemble, and one call against one HTTP request. */
export async function runBlsSuite(context: BenchContext): Promise<ComparisonResult[]> {
  return [await pipelineComparison(context), await callOverheadComparison(context)];
}
