import { type PerfReport, perfReportRow } from "./perf-report";

/**
 * perf_analyzer's `-f` CSV: one row per load level sorted by throughput, latencies in whole µs, columns
 * `Concurrency|Request Rate, Inferences/Second, Client Send, Network+Server Send/Recv, Server Queue,
 * Server Compute Input, Server Compute Infer, Server Compute Output, Client Recv, p50/p90/p95/p99 latency`
 * (plus the `--percentile` one in order).
 */
export function formatPerfCsv(report: PerfReport): string {
  const rows = report.levels.map(({ level, result }) => perfReportRow(level, result)).sort((a, b) => a.throughput - b.throughput);
  const percentiles = [...(rows[0]?.percentilesUs.keys() ?? [])];
  const header = [
    report.mode === "concurrency" ? "Concurrency" : "Request Rate", "Inferences/Second", "Client Send", "Network+Server Send/Recv",
    "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output", "Client Recv",
    ...percentiles.map((p) => `p${p} latency`),
  ];
  const us = (value: number): string => String(Math.floor(value));
  const lines = rows.map((row) => [
    String(row.level), String(Number(row.throughput.toFixed(4))), us(row.clientSendUs), us(row.networkServerSendRecvUs),
    us(row.server.queueUs), us(row.server.computeInputUs), us(row.server.computeInferUs), us(row.server.computeOutputUs),
    us(row.clientRecvUs), ...percentiles.map((p) => us(row.percentilesUs.get(p) ?? 0)),
  ].join(","));
  return [header.join(","), ...lines].join("\n") + "\n";
}
