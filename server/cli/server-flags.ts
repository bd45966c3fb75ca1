import { Command, Option } from "@commander-js/extra-typings";
import { DEFAULT_MAX_CALL_DEPTH, DEFAULT_REQUEST_LIMITS, DEFAULT_STREAM_BACKLOG } from "../core/index";
import { booleanFlag, collect, parseBoolean, parseInteger } from "../../common/option-parsers";
import { MAX_VERBOSE_LEVEL } from "../logging/log-settings";
import { GRPC_COMPRESSION_LEVELS } from "../frontends/grpc/response-compression";

/**
 * Tensors arrive as ArrayBuffers outside the JS heap, and V8 counts them towards its next full collection: at
 * its adaptive default a server taking 600 KB images runs a full mark-compact about once a second, on a heap
 * whose live part (~16 MB) hardly changes, and that CPU comes out of the inference threads' share. Letting the
 * heap grow to 4x its live size first makes full collections rare for a few tens of MB.
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 300;

/**
 * The largest gRPC message by default: as large as the largest HTTP body (--http-max-input-size), so that one
 * request costs the same at most whichever protocol it takes. Triton's INT32_MAX (2 GiB) lets one request take
 * several times that in memory while it is decoded; deployments that send larger tensors raise both.
 */
export const DEFAULT_GRPC_MAX_MESSAGE_BYTES = 1 << 26;

/**
 * The largest HTTP/2 frame gRPC clients may send by default: 1 MiB, as Go's net/http2 servers allow
 * (`defaultMaxReadFrameSize`). At HTTP/2's own default, 16 KiB, a 600 KB image tensor comes as 37 DATA frames, which
 * Node hands JavaScript as ~46 chunks (a frame cut by a socket read comes in two). gRPC's C core (the Python and C++
 * clients, perf_analyzer) sends frames as large as the server allows, and then the tensor comes in ~10 chunks, one
 * per socket read, for less main-thread CPU per request (docs/benchmarks.md); Node's own clients send 16 KiB frames
 * whatever the server allows. DATA and HEADERS frames are read as they arrive, never held whole; only a GOAWAY's
 * debug text is, once per connection.
 */
export const DEFAULT_GRPC_MAX_FRAME_BYTES = 1 << 20;

/** Bytes of requests in flight by default: sixteen of the largest requests, at their bodies' size. */
export const DEFAULT_MAX_INFLIGHT_REQUEST_BYTES = 1 << 30;

/**
 * The server's own flags, in --help order; {@link buildCommand} appends the network flags. A file of its own so that
 * network-options.ts can name this command's type without an import cycle.
 */
export function serverFlags() {
  return new Command("inference-server")
    .description("Triton-compatible (KServe v2) inference server for ONNX models")
    .option("--model-repository <dir>", "model repository path; repeat for several (alias --model-store)", collect, [])
    .option("--model-store <dir>", "alias of --model-repository", collect, [])
    .option("--id <name>", "server name reported in server metadata", "triton")
    .option("--http-address <address>", "address the HTTP endpoint binds", "0.0.0.0")
    .option("--http-port <port>", "HTTP (KServe v2 REST) port; 0 picks a free one", parseInteger(0, 65535), 8000)
    .option("--grpc-address <address>", "address the gRPC endpoint binds", "0.0.0.0")
    .option("--grpc-port <port>", "gRPC (GRPCInferenceService) port; 0 picks a free one", parseInteger(0, 65535), 8001)
    .option("--metrics-address <address>", "address the metrics endpoint binds", "0.0.0.0")
    .option("--metrics-port <port>", "Prometheus metrics port (path /metrics); 0 picks a free one", parseInteger(0, 65535), 8002)
    .addOption(booleanFlag("--allow-http", "serve the HTTP endpoint", true))
    .addOption(booleanFlag("--allow-grpc", "serve the gRPC endpoint", true))
    .addOption(booleanFlag("--allow-metrics", "serve the metrics endpoint", true))
    .addOption(booleanFlag("--allow-cpu-metrics", "export host CPU utilization and memory (nv_cpu_*)", true))
    .addOption(booleanFlag("--allow-gpu-metrics", "export GPU utilization and memory (nv_gpu_*) read with nvidia-smi", true))
    .addOption(booleanFlag("--allow-software-gpu", "without an NVIDIA GPU, count a software WebGPU adapter (Mesa's lavapipe) as GPU 0 for KIND_GPU/KIND_AUTO", false))
    .option("--metrics-interval-ms <ms>", "how often CPU and GPU metrics are sampled (at least 100)", parseInteger(100), 2000)
    .addOption(booleanFlag("--strict-readiness", "ready only when every model is ready (else: when the server responds)", true))
    .addOption(booleanFlag("--exit-on-error", "exit when a model fails to load at startup", true))
    .option("--exit-timeout-secs <secs>", "on SIGTERM, how long to wait for in-flight requests", parseInteger(0), 30)
    .option("--disable-auto-complete-config", "do not complete model configs from the model files", false)
    .addOption(new Option("--strict-model-config [bool]", "deprecated alias: true disables auto-complete").argParser(parseBoolean))
    .option("--log-verbose <level>", "verbose logging level (0 = off, 1+ = debug)", parseInteger(0, MAX_VERBOSE_LEVEL), 0)
    .addOption(booleanFlag("--log-info", "write info lines", true))
    .addOption(booleanFlag("--log-warning", "write warning lines", true))
    .addOption(booleanFlag("--log-error", "write error lines", true))
    .addOption(new Option("--log-format <format>", "the time field of each JSON line: default (epoch milliseconds) or ISO8601 (UTC string)").choices(["default", "ISO8601"]).default("default"))
    .option("--http-max-input-size <bytes>", "largest HTTP request body, compressed or decompressed", parseInteger(1), 1 << 26)
    .option("--max-bytes-elements <count>", "most BYTES (string) elements one input tensor may hold (each costs far more memory than its 4 bytes on the wire)", parseInteger(1, 2 ** 31 - 1), DEFAULT_REQUEST_LIMITS.maxBytesElements)
    .option("--max-bytes-element-size <bytes>", "largest single BYTES (string) element", parseInteger(1, 2 ** 32 - 1), DEFAULT_REQUEST_LIMITS.maxBytesElementSize)
    .option("--max-stream-backlog <responses>", "most responses one stream (SSE, gRPC) may have written while its client reads none; one more fails the stream (at least the 64 a TypeScript model's send may run ahead)", parseInteger(64, 2 ** 31 - 1), DEFAULT_STREAM_BACKLOG)
    .option("--model-call-max-depth <count>", "most nested calls from a model to another model (BLS); a call beyond is refused", parseInteger(1, 1000), DEFAULT_MAX_CALL_DEPTH)
    .option("--grpc-max-message-size <bytes>", "largest gRPC message received or sent (Triton: 2147483647)", parseInteger(1, 2 ** 31 - 1), DEFAULT_GRPC_MAX_MESSAGE_BYTES)
    .option("--grpc-flow-control-window <bytes>", "HTTP/2 receive window per stream and per connection", parseInteger(65_535, 2 ** 31 - 1), 8 * 1024 * 1024)
    .option("--grpc-max-frame-size <bytes>", "largest HTTP/2 frame clients may send (SETTINGS_MAX_FRAME_SIZE; HTTP/2 allows 16384-16777215)", parseInteger(16_384, 16_777_215), DEFAULT_GRPC_MAX_FRAME_BYTES)
    .addOption(new Option("--grpc-infer-response-compression-level <level>", "compression of ModelInfer and ModelStreamInfer responses, as Triton: low picks gzip, medium and high deflate, among those the client accepts").choices(GRPC_COMPRESSION_LEVELS).default("none"))
    .option("--grpc-infer-thread-count <n>", "accepted for Triton's scripts; no effect (Node serves every call on one event loop, inference runs in the model instances' threads)", parseInteger(1), 2)
    .addOption(new Option("--model-control-mode <mode>", "none: load all at start; explicit: load --load-model at start, then load/unload API; poll: load all at start, then follow the repository").choices(["none", "explicit", "poll"]).default("none"))
    .addOption(new Option("--model-symlinks <policy>", "inside: a file a model reads (config, labels, model file, warmup data) must resolve inside the model's directory after symlinks, and a linked model directory inside its repository; any: follow every symlink, as Triton does (only for repositories whose every writer you trust)").choices(["inside", "any"]).default("inside"))
    .option("--repository-poll-secs <secs>", "poll mode: how often the repository is rescanned for new, changed and removed models", parseInteger(1), 15)
    .option("--load-model <name>", "model to load at start in explicit mode; '*' loads all; repeatable", collect, [])
    .option("--backend-config <config>", "onnxruntime,intra_op_thread_count=N | onnxruntime,default-max-batch-size=N; repeatable", collect, [])
    .option("--cache-config <config>", "local,size=<bytes>: the response cache that models with response_cache { enable: true } use; repeatable", collect, [])
    .option(
      "--heap-growing-percent <percent>",
      "how far the JS heap may grow past its live size before the next full GC (V8's --heap-growing-percent; 0 = V8's adaptive default, which collects about once a second under large-tensor load)",
      parseInteger(0, 1000), DEFAULT_HEAP_GROWING_PERCENT,
    )
    .addOption(booleanFlag(
      "--allocation-site-pretenuring",
      "V8's --allocation-site-pretenuring: allocate objects of sites whose objects mostly outlived a young collection straight into the old generation. Off by default: once unary gRPC calls with large tensors had made V8 pretenure their per-call objects, every later large request kept its tensor buffers until a full GC",
      false,
    ))
    .option("--instance-restart-backoff-ms <ms>", "delay before a model instance whose worker thread died is restarted; doubles with each consecutive failure", parseInteger(0), 100)
    .option("--instance-restart-max-backoff-ms <ms>", "longest delay between restarts of one instance", parseInteger(0), 10_000)
    .option("--trace-config <config>", "[triton,]file=<path> | triton,log-frequency=N | rate=N | level=OFF|TIMESTAMPS|TENSORS | count=N (-1: no limit) | mode=triton; repeatable", collect, [])
    .option("--trace-max-pending-bytes <bytes>", "bytes of traces a trace file may hold back (being written, or collected for a log-frequency group); beyond it traces are dropped or a group is written early; also the most one request's TENSORS entries may take", parseInteger(1), 64 * 1024 * 1024)
    .addOption(booleanFlag("--allow-client-shm", "let clients register system shared memory regions (files of this host's /dev/shm); off by default, as in Triton since 26.05", false))
    .addOption(booleanFlag("--allow-model-code-upload", "let the model repository API's load requests carry model code in file: overrides (a TypeScript model's model.js, scripts, native libraries), which then runs on this server; off by default: anyone who reaches the load API could run anything", false))
    .option("--max-shared-memory-regions <n>", "most system shared memory regions registered at once; each keeps its /dev/shm file open", parseInteger(1), 256)
    .option("--max-shared-memory-input-bytes <bytes>", "most bytes one request may read from shared memory, all its inputs together (they are copied into the server's memory)", parseInteger(1), 1 << 26)
    .option("--max-inflight-request-bytes <bytes>", "most bytes all requests in flight may hold at once (HTTP bodies and gRPC messages as they arrive and inflate, and the tensors decoded from them, both protocols together); a request that does not fit is answered 503 / RESOURCE_EXHAUSTED, one larger than the whole budget 400 / RESOURCE_EXHAUSTED", parseInteger(1), DEFAULT_MAX_INFLIGHT_REQUEST_BYTES);
}
