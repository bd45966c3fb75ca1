import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, runAbComparison } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { type InferenceServerProcess, startInferenceServerProcess } from "../tools/tune/index";

/**
 * What metrics cost on the hot path: `simple` over HTTP binary against two servers that differ only in
 * `--allow-metrics`, alternated A/B. The metrics server is scraped once a second while it is measured, as a
 * Prometheus would (more often than the usual 15 s, to be pessimistic).
 */
export async function runMetricsOverheadSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const flags = ["--allow-grpc", "false", "--model-control-mode", "explicit", "--load-model", "simple"];
  const servers: InferenceServerProcess[] = [];
  const clients: InferenceClient[] = [];
  try {
    const withMetrics = await startInferenceServerProcess(context.modelRepository, flags);
    servers.push(withMetrics);
    const withoutMetrics = await startInferenceServerProcess(context.modelRepository, [...flags, "--allow-metrics", "false"]);
    servers.push(withoutMetrics);
    const metricsUrl = `${withMetrics.metricsUrl!}/metrics`;
    const inputs: InferInput[] = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) }));
    const measure = (server: InferenceServerProcess, scrape: boolean) => async () => {
      const client = new InferenceClient({ url: server.httpUrl });
      clients.push(client);
      const send = preparedSender(client, "simple", inputs);
      const scraper = scrape ? setInterval(() => void fetch(metricsUrl).then((r) => r.text()), 1000) : undefined;
      try {
        return await measureThroughput(send, { concurrency: options.simpleConcurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
      } finally {
        clearInterval(scraper);
      }
    };
    context.notes.push(`metrics: simple at concurrency ${options.simpleConcurrency}, HTTP binary, two servers differing only in --allow-metrics; /metrics scraped every second while measured`);
    return [await runAbComparison(
      "simple: metrics on / off", `concurrency ${options.simpleConcurrency}, binary`,
      { label: "metrics on", measure: measure(withMetrics, true) }, { label: "metrics off", measure: measure(withoutMetrics, false) },
      options.rounds,
      (round, r) => log(`metrics round ${round}: on ${r.a.throughput.toFixed(0)}, off ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)})`),
    )];
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(servers.map((server) => server.process.stop()));
  }
}
