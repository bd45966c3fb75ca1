import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, medianThroughput, runAbComparison, StreamRecorder, streamingSender } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";

/** Responses each streamed request asks text_generator for. */
const RESPONSES_PER_REQUEST = 100;
/** Sequential streams whose time to first response is taken, on an otherwise idle server. */
const FIRST_RESPONSE_STREAMS = 50;

/**
 * A decoupled model's streaming, over the two ways this server streams: the example model text_generator sends
 * 100 responses (one byte each) per request, over gRPC ModelStreamInfer (our client's inferStream) and over
 * Triton's `/generate_stream` (server-sent events). Throughput is streams/s, alternated A/B; responses/s is that
 * times 100. Time to first response is taken apart, one stream at a time, so it is not queueing behind the load.
 */
export async function runStreamingSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const server = await startInferenceServerProcess(context.modelRepository, [
    "--allow-metrics", "false", "--model-control-mode", "explicit", "--load-model", "text_generator",
  ], context.options.serverRoot);
  const grpc = new InferenceClient({ url: `grpc://${server.grpcAddress!}` });
  const http = new InferenceClient({ url: server.httpUrl });
  try {
    const inputs: InferInput[] = [{ name: "text_input", datatype: "BYTES", shape: [1], data: ["the quick brown fox jumps over the lazy dog"] }];
    const request = { parameters: { max_tokens: RESPONSES_PER_REQUEST } };
    const concurrency = options.simpleConcurrency;
    const sides = [["gRPC ModelStreamInfer", grpc], ["HTTP /generate_stream", http]] as const;
    for (const [label, client] of sides) {
      const recorder = new StreamRecorder();
      const send = streamingSender(client, "text_generator", inputs, request, recorder);
      for (let i = 0; i < 5; i++) await send();
      recorder.reset();
      for (let i = 0; i < FIRST_RESPONSE_STREAMS; i++) await send();
      const { firstResponseMs, responsesPerStream } = recorder.summary();
      const ms = (p: number): string => (firstResponseMs.get(p) ?? 0).toFixed(2);
      context.notes.push(`streaming: ${label}: time to first response p50 ${ms(50)} ms, p90 ${ms(90)} ms, p99 ${ms(99)} ms (${FIRST_RESPONSE_STREAMS} streams one at a time, ${responsesPerStream} responses each)`);
    }
    const at = (client: InferenceClient) => () =>
      measureThroughput(streamingSender(client, "text_generator", inputs, request, new StreamRecorder()), { concurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
    const result = await runAbComparison(
      "streaming 100 responses/request: gRPC / generate_stream", `text_generator, concurrency ${concurrency}, streams/s`,
      { label: "gRPC stream", measure: at(grpc) }, { label: "generate_stream (SSE)", measure: at(http) }, options.rounds,
      (round, r) => log(`streaming round ${round}: gRPC ${(r.a.throughput * RESPONSES_PER_REQUEST).toFixed(0)}, SSE ${(r.b.throughput * RESPONSES_PER_REQUEST).toFixed(0)} responses/s`),
    );
    const responses = (side: "a" | "b"): string => (medianThroughput(result, side) * RESPONSES_PER_REQUEST).toFixed(0);
    context.notes.push(`streaming: responses/s at concurrency ${concurrency} (median of ${options.rounds} rounds): gRPC ${responses("a")}, generate_stream ${responses("b")}`);
    return [result];
  } finally {
    await Promise.all([grpc.close(), http.close()]);
    await server.process.stop();
  }
}
