import path from "node:path";
import { Command } from "@commander-js/extra-typings";
import { knownList, positiveInteger, positiveIntegerList } from "./option-parsers";

/**
 * resnet50 and simple compare against baselines; mlp compares batching settings; metrics compares each side channel
 * (metrics, tracing, logging) on against off; metrics-scrape scrapes a 200-model server while requests run;
 * image-tensor compares gRPC with HTTP (and gRPC's HTTP/2 windows) for a 600 KB tensor; grpc-transport compares gRPC
 * transports (grpc-js, connect-node, our own on node:http2) with HTTP for simple and a 600 KB tensor; image compares the
 * image_classifier ensemble with client-side preprocessing; typescript compares the TypeScript backend with the
 * built-in identity backend; streaming compares a decoupled model's streams over gRPC and /generate_stream; bls compares
 * image_classifier_bls with the ensemble and a BLS call with an HTTP request; tuned compares inference-tune's configs
 * with the shipped ones (minutes of tuning, so
 * only when asked for); gpu-standin measures the server at GPU rates without a GPU (a model with resnet50's I/O and
 * next to no compute, batched to 32) against in-process ONNX Runtime, with the main thread's CPU per request.
 */
export type BenchModel = "resnet50" | "simple" | "mlp" | "metrics" | "metrics-scrape" | "image-tensor" | "grpc-transport" | "image" | "typescript" | "streaming" | "bls" | "tuned" | "gpu-standin";
const BENCH_MODELS: readonly BenchModel[] = ["resnet50", "simple", "mlp", "metrics", "metrics-scrape", "image-tensor", "grpc-transport", "image", "typescript", "streaming", "bls", "tuned", "gpu-standin"];
const DEFAULT_BENCH_MODELS: readonly BenchModel[] = BENCH_MODELS.filter((model) => model !== "tuned");

/** What `npm run bench` measures and for how long. */
export interface BenchOptions {
  readonly quick: boolean;
  /** Also run the GPU suite (resnet50 on the GPU against in-process ONNX Runtime with the same provider). */
  readonly gpu: boolean;
  readonly models: readonly BenchModel[];
  /** A/B rounds per comparison (at least 3). */
  readonly rounds: number;
  /** Measured window per side per round. */
  readonly windowMs: number;
  /** Load before each measured window, thrown away. */
  readonly warmupMs: number;
  /** Window of each step of the sweeps that pick resnet50's best concurrency and baseline batch size. */
  readonly calibrationWindowMs: number;
  readonly resnet50Concurrency: readonly number[];
  readonly resnet50BatchSizes: readonly number[];
  readonly simpleConcurrency: number;
  /** Concurrencies to pick each side of the image comparison's best from. */
  readonly imageConcurrency: readonly number[];
  readonly outDir: string;
  /** `tuned`: read inference-tune's results from `<dir>/<model>/` instead of tuning first. */
  readonly tunedDir: string | undefined;
  /** The checkout whose built server (`dist/server/main.js`) is measured; this one's when undefined. */
  readonly serverRoot: string | undefined;
  /** gpu-standin and --gpu: load generator processes for the server sides (1: this process's own JS thread). */
  readonly loadProcesses: number;
}

/** Parses `npm run bench -- <flags>`; `--quick` picks short windows and small sweeps so the run fits in 2 minutes. */
export function parseBenchOptions(argv: readonly string[], repositoryRoot: string): BenchOptions {
  const command = new Command("run-bench")
    .description("Measure the server against its baselines (in-process ONNX Runtime, bare fastify, bare grpc-js, binary vs JSON), alternating A/B")
    .option("--quick", "short windows and sweeps: finishes in under 2 minutes on 2 cores", false)
    .option("--models <list>", `comparisons to run: ${BENCH_MODELS.join(",")} (default all but tuned; empty: none, e.g. with --gpu)`, knownList(BENCH_MODELS, "model", { skipEmpty: true }), [...DEFAULT_BENCH_MODELS])
    .option("--gpu", "add the GPU suite: resnet50 on the GPU vs in-process ONNX Runtime (HTTP, gRPC), batching, FP16 (needs an NVIDIA GPU)", false)
    .option("--rounds <n>", "A/B rounds per comparison (at least 3; default 5, quick 3); more rounds ride out a noisy neighbour better than longer windows", positiveInteger)
    .option("--window-ms <ms>", "measured window per side per round (default 5000, quick 1000)", positiveInteger)
    .option("--warmup-ms <ms>", "discarded load before each window (default 1000, quick 200)", positiveInteger)
    .option("--resnet50-concurrency <list>", "server concurrencies to pick the best from (default 2,4,8,16; quick 8,16): with dynamic batching, concurrency 16 keeps batches of 8 going", positiveIntegerList)
    .option("--resnet50-batch <list>", "in-process ORT batch sizes to pick the best from (default 1,2,4,8; quick 1,8)", positiveIntegerList)
    .option("--simple-concurrency <n>", "concurrency for the simple model and its baseline (and the TypeScript-backend identity, and the streaming suite)", positiveInteger, 8)
    .option("--image-concurrency <list>", "concurrencies to pick each side of the image comparison's best from (default 2,4,8,16; quick 4,8)", positiveIntegerList)
    .option("--out <dir>", "where JSON, CSV and the chart go", path.join(repositoryRoot, "bench", "results"))
    .option("--tuned-dir <dir>", "tuned: use the inference-tune results in <dir>/mlp and <dir>/resnet50 (written with --out) instead of tuning first")
    .option("--load-processes <n>", "gpu-standin and --gpu: send the server's load from n child processes (default 1: this process), where one JS thread would limit it", positiveInteger, 1)
    .option("--server-root <dir>", "measure the server built in another checkout (its root, after `npm run build` there) with this checkout's load generators and baselines: an earlier commit side by side with this one")
    .exitOverride()
    .parse([...argv], { from: "user" });
  const o = command.opts();
  const { quick } = o;
  const rounds = o.rounds ?? (quick ? 3 : 5);
  if (rounds < 3) command.error("error: --rounds must be at least 3 (A/B alternated at least 3 times)", { exitCode: 2 });
  const windowMs = o.windowMs ?? (quick ? 1000 : 5000);
  return {
    quick,
    gpu: o.gpu,
    models: o.models,
    rounds,
    windowMs,
    warmupMs: o.warmupMs ?? (quick ? 200 : 1000),
    calibrationWindowMs: quick ? 1000 : Math.max(1000, Math.round(windowMs / 2)),
    resnet50Concurrency: o.resnet50Concurrency ?? (quick ? [8, 16] : [2, 4, 8, 16]),
    resnet50BatchSizes: o.resnet50Batch ?? (quick ? [1, 8] : [1, 2, 4, 8]),
    simpleConcurrency: o.simpleConcurrency,
    imageConcurrency: o.imageConcurrency ?? (quick ? [4, 8] : [2, 4, 8, 16]),
    outDir: o.out,
    tunedDir: o.tunedDir === undefined ? undefined : path.resolve(o.tunedDir),
    serverRoot: o.serverRoot === undefined ? undefined : path.resolve(o.serverRoot),
    loadProcesses: o.loadProcesses,
  };
}
