import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, type RequestSender, runAbComparison } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { MainThreadCpuPerRequest } from "./main-thread-cpu";
import { startInferenceServerProcess } from "../tools/tune/index";

const MODEL = "identity_fp32";
/** One 3x224x224 FP32 image: the tensor every image classifier request carries (602,112 bytes). */
const IMAGE_ELEMENTS = 3 * 224 * 224;
const CONCURRENCY = 8;
/** HTTP/2's default window, what grpc-js servers and clients use unless told otherwise. */
const HTTP2_DEFAULT_WINDOW = 65_535;

/**
 * The cost of carrying an image-sized tensor (no compute: the identity model) over gRPC against HTTP binary, and
 * what the gRPC endpoint's widened HTTP/2 receive windows buy against Node's 64 KiB default (both ends at 64 KiB
 * in the B side: a second server started with `--grpc-flow-control-window 65535`, a client with the same window).
 */
export async function runImageTensorSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const flags = ["--allow-metrics", "false", "--model-control-mode", "explicit", "--load-model", MODEL];
  const wide = await startInferenceServerProcess(context.modelRepository, flags, context.options.serverRoot);
  const narrow = await startInferenceServerProcess(context.modelRepository, [...flags, "--grpc-flow-control-window", String(HTTP2_DEFAULT_WINDOW)], context.options.serverRoot);
  const clients = {
    http: new InferenceClient({ url: wide.httpUrl }),
    grpc: new InferenceClient({ url: `grpc://${wide.grpcAddress}` }),
    grpcNarrow: new InferenceClient({ url: `grpc://${narrow.grpcAddress}`, flowControlWindowBytes: HTTP2_DEFAULT_WINDOW }),
  };
  const inputs: InferInput[] = [{ name: "INPUT0", datatype: "FP32", shape: [1, IMAGE_ELEMENTS], data: Float32Array.from({ length: IMAGE_ELEMENTS }, () => Math.random()) }];
  const sender = (client: InferenceClient) => preparedSender(client, MODEL, inputs, { inputFormat: "binary", outputFormat: "binary" });
  const window = (send: RequestSender) => measureThroughput(send, { concurrency: CONCURRENCY, warmupMs: options.warmupMs, durationMs: options.windowMs });
  const at = (client: InferenceClient) => () => window(sender(client));
  const serverCpu = new MainThreadCpuPerRequest(wide.process.pid!);
  const withCpu = (label: string, client: InferenceClient) => () => serverCpu.measure(label, sender(client), window);
  try {
    context.notes.push(`image tensor: ${MODEL}, one FP32 [1, ${IMAGE_ELEMENTS}] (600 KB) in and out per request, concurrency ${CONCURRENCY} (gRPC: one HTTP/2 channel)`);
    const protocols = await runAbComparison(
      "600 KB tensor", `concurrency ${CONCURRENCY}, identity model`,
      { label: "gRPC", measure: withCpu("gRPC", clients.grpc) }, { label: "HTTP binary", measure: withCpu("HTTP binary", clients.http) }, options.rounds,
      (round, r) => log(`image tensor round ${round}: gRPC ${r.a.throughput.toFixed(0)}, HTTP ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    );
    context.notes.push(`image tensor: server main-thread CPU per request (median, range over rounds): ${serverCpu.summary()}`);
    const windows = await runAbComparison(
      "600 KB tensor over gRPC", `concurrency ${CONCURRENCY}, identity model`,
      { label: "8 MiB windows", measure: at(clients.grpc) }, { label: "64 KiB windows", measure: at(clients.grpcNarrow) }, options.rounds,
      (round, r) => log(`image tensor round ${round}: 8 MiB ${r.a.throughput.toFixed(0)}, 64 KiB ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    );
    return [protocols, windows];
  } finally {
    await Promise.all(Object.values(clients).map((client) => client.close()));
    await wide.process.stop();
    await narrow.process.stop();
  }
}
