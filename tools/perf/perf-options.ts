import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "@commander-js/extra-typings";
import { booleanFlag, integer, positiveNumber, shape } from "../../common/option-parsers";
import type { ClientTls, TensorFormat } from "../../client/index";
import { type LoadRange, parseLoadRange } from "./load-range";

/** The load to apply: a concurrency sweep (closed loop) or a request-rate sweep (open loop). */
export type LoadSpec =
  | { readonly kind: "concurrency"; readonly range: LoadRange }
  | { readonly kind: "request-rate"; readonly range: LoadRange; readonly distribution: "constant" | "poisson" };

/** Everything `inference-perf` was asked to do, validated. Flag names follow perf_analyzer's. */
export interface PerfOptions {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  /**
   * `http://host:port` or `grpc://host:port` (`-u` takes perf_analyzer's bare `host:port`); `https://` when -u says
   * so, `grpcs://` with --ssl-grpc-use-ssl.
   */
  readonly url: string;
  /** Headers (-H) sent with every request: HTTP headers, and gRPC metadata. */
  readonly headers: Readonly<Record<string, string>>;
  /** CA, client certificate and checks for https:// and grpcs:// (perf_analyzer's --ssl-* flags). */
  readonly tls: ClientTls | undefined;
  readonly protocol: "http" | "grpc";
  readonly batchSize: number;
  readonly load: LoadSpec;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  readonly percentile: number | undefined;
  readonly latencyThresholdMs: number | undefined;
  /** "random", "zero", a path to a JSON data file, or a directory (perf_analyzer's layout, or one file per BYTES element). */
  readonly inputData: string;
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly inputTensorFormat: TensorFormat;
  readonly outputTensorFormat: TensorFormat;
  readonly warmupRequestCount: number;
  /** perf_analyzer's --streaming: each request on a stream of its own (gRPC ModelStreamInfer, HTTP /generate_stream). */
  readonly streaming: boolean;
  readonly csvFile: string | undefined;
  /** A file to write the JSON report to, or `"-"` for stdout (then the table goes to stderr). */
  readonly jsonFile: string | undefined;
  readonly reportDir: string | undefined;
  readonly verbose: boolean;
  /** Serve the results on this port's `/metrics` while running (see prometheus-results.ts). */
  readonly prometheusPort: number | undefined;
  /** After the run, keep serving the results until scraped once, at most this long. */
  readonly prometheusLingerMs: number;
}

/** commander argument parser: a `start:end:step` load range, {@link parseLoadRange}'s complaint as the error. */
export function loadRange(kind: "concurrency" | "request-rate") {
  return (value: string): LoadRange => {
    try {
      return parseLoadRange(value, kind);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/** perf_analyzer's `-H 'Header:Value'`, repeatable. */
function header(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):(.*)$/.exec(value);
  if (match === null) throw new InvalidArgumentError("expected NAME:VALUE, NAME a header field name");
  return { ...previous, [match[1]!.toLowerCase()]: match[2]!.trim() };
}

/**
 * perf_analyzer's `-u host:port` (a scheme is accepted too) as a URL for the chosen protocol; undefined if invalid.
 * As perf_analyzer's HTTP client, `https://` keeps HTTPS; gRPC uses TLS with --ssl-grpc-use-ssl.
 */
function serverUrl(value: string | undefined, protocol: "http" | "grpc", grpcTls: boolean): string | undefined {
  const given = value ?? (protocol === "grpc" ? "localhost:8001" : "localhost:8000");
  const scheme = protocol === "grpc" ? (grpcTls ? "grpcs" : "grpc") : /^https:\/\//i.test(given) ? "https" : "http";
  const hostPort = given.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  return URL.canParse(`${scheme}://${hostPort}`) ? new URL(`${scheme}://${hostPort}`).href.replace(/\/$/, "") : undefined;
}

function pemFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new InvalidArgumentError(`cannot read '${path}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** perf_analyzer's 0/1 (and 0/1/2 for host checks) switches. */
function level(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > max) throw new InvalidArgumentError(`must be an integer from 0 to ${max}`);
    return n;
  };
}

/** The --ssl-* flags of the chosen protocol as the client's TLS settings; undefined without TLS. */
function clientTls(o: PerfOptionValues, url: string): ClientTls | undefined {
  if (url.startsWith("grpcs:")) {
    return { ca: o.sslGrpcRootCertificationsFile, key: o.sslGrpcPrivateKeyFile, cert: o.sslGrpcCertificateChainFile };
  }
  if (url.startsWith("https:")) {
    return {
      ca: o.sslHttpsCaCertificatesFile, cert: o.sslHttpsClientCertificateFile, key: o.sslHttpsPrivateKeyFile,
      verifyPeer: o.sslHttpsVerifyPeer !== 0, verifyHost: o.sslHttpsVerifyHost !== 0,
    };
  }
  return undefined;
}

/** The commander program: flags, defaults and help text. */
export function buildPerfCommand() {
  return new Command("inference-perf")
    .description("Measure a KServe v2 / Triton inference server the way perf_analyzer does: throughput, latency percentiles and the server-side breakdown per load level")
    .requiredOption("-m, --model-name <name>", "model to profile")
    .option("-x, --model-version <version>", "model version (default: the server's choice)")
    .option("-u, --url <host:port>", "server address (default: localhost:8000 for http, localhost:8001 for grpc)")
    .addOption(new Option("-i, --protocol <protocol>", "protocol").choices(["http", "grpc"]).default("http"))
    .option("-b, --batch-size <n>", "batch size of each request", integer(1), 1)
    .option("--concurrency-range <start:end:step>", "closed loop: requests kept outstanding (end 0: grow until --latency-threshold) (default: 1)", loadRange("concurrency"))
    .option("--request-rate-range <start:end:step>", "open loop: requests started per second", loadRange("request-rate"))
    .addOption(new Option("--request-distribution <kind>", "arrival pattern of --request-rate-range").choices(["constant", "poisson"]).default("constant"))
    .option("-p, --measurement-interval <ms>", "length of one measurement window", integer(1), 5000)
    .option("-s, --stability-percentage <pct>", "largest spread (max/min - 1, %) of throughput and latency over the last 3 windows", positiveNumber, 10)
    .option("-r, --max-trials <n>", "most measurement windows per load level", integer(1), 10)
    .option("--percentile <p>", "stabilize on this latency percentile instead of the average", integer(1))
    .option("-l, --latency-threshold <ms>", "stop the sweep once latency exceeds this", positiveNumber)
    .option("--input-data <source>", "random, zero, a perf_analyzer JSON data file ({\"b64\": ...} for binary), or a directory: a file per input (perf_analyzer's layout) or, for one BYTES input, one file per element (e.g. images)", "random")
    .option("--shape <name:dims>", "shape of an input with variable dimensions, batch dimension excluded; repeatable", shape)
    .addOption(new Option("--input-tensor-format <format>", "HTTP tensor encoding of inputs (gRPC always sends raw bytes)").choices(["binary", "json"]).default("binary"))
    .addOption(new Option("--output-tensor-format <format>", "HTTP tensor encoding of outputs (gRPC always sends raw bytes)").choices(["binary", "json"]).default("binary"))
    .option("--warmup-request-count <n>", "requests sent before the first measurement", integer(0), 0)
    .option("--streaming", "stream each request (gRPC ModelStreamInfer; over HTTP Triton's /generate_stream), as a decoupled model needs: infer/s counts whole streams, and each level adds time to first response and responses/s", false)
    .option("-f, --latency-report-file <file>", "write perf_analyzer's CSV here")
    .option("--json [file]", "write the results as JSON to a file, or to stdout without one")
    .option("--report <dir>", "write a latency-vs-throughput chart (SVG, PNG) and an HTML page here")
    .option("-v, --verbose", "print every measurement window", false)
    .option("-H, --header <name:value>", "'Header:Value' added to every request (HTTP header; unlike perf_analyzer, also gRPC metadata); repeatable", header)
    .option("--prometheus-port <port>", "serve the latest window's throughput and latency on this port's /metrics while running", integer(0))
    .option("--prometheus-linger-ms <ms>", "after the run, keep serving /metrics until scraped once, at most this long", integer(0), 0)
    .addOption(booleanFlag("--ssl-grpc-use-ssl", "gRPC over TLS", false))
    .option("--ssl-grpc-root-certifications-file <path>", "PEM CA certificates to trust for the gRPC server", pemFile)
    .option("--ssl-grpc-private-key-file <path>", "PEM key of the client certificate (mutual TLS)", pemFile)
    .option("--ssl-grpc-certificate-chain-file <path>", "PEM client certificate chain (mutual TLS)", pemFile)
    .option("--ssl-https-verify-peer <0|1>", "check the HTTPS server's certificate", level(1), 1)
    .option("--ssl-https-verify-host <0|1|2>", "check that the certificate names the host (0 = no)", level(2), 2)
    .option("--ssl-https-ca-certificates-file <path>", "PEM CA certificates to trust for the HTTPS server", pemFile)
    .option("--ssl-https-client-certificate-file <path>", "PEM client certificate (mutual TLS)", pemFile)
    .option("--ssl-https-private-key-file <path>", "PEM key of the client certificate (mutual TLS)", pemFile);
}

/** The option values {@link buildPerfCommand} declares, as commander parses them. */
type PerfOptionValues = ReturnType<ReturnType<typeof buildPerfCommand>["opts"]>;

/** Parses argv (without node and the script). Throws commander's errors for bad or inconsistent flags. */
export function parsePerfOptions(argv: readonly string[], command = buildPerfCommand()): PerfOptions {
  command.exitOverride().parse([...argv], { from: "user" });
  const o = command.opts();
  const { concurrencyRange: concurrency, requestRateRange: requestRate, percentile, latencyThreshold: latencyThresholdMs, protocol } = o;
  const fail = (message: string): never => command.error(`error: ${message}`, { exitCode: 2, code: "inference-perf.invalidOptions" });
  if (concurrency !== undefined && requestRate !== undefined) fail("--concurrency-range and --request-rate-range cannot be combined");
  if (percentile !== undefined && percentile > 99) fail("--percentile must be between 1 and 99");
  if (concurrency?.end === 0 && latencyThresholdMs === undefined) fail("--concurrency-range with end 0 needs --latency-threshold to know when to stop");
  const url = serverUrl(o.url, protocol, o.sslGrpcUseSsl) ?? fail(`-u '${String(o.url)}' is not host:port`);
  const httpsFlag = [o.sslHttpsCaCertificatesFile, o.sslHttpsClientCertificateFile, o.sslHttpsPrivateKeyFile].some((file) => file !== undefined);
  if (httpsFlag && !url.startsWith("https:")) fail("--ssl-https-* flags need -i http and an https:// server URL (-u https://host:port)");
  const load: LoadSpec = requestRate !== undefined
    ? { kind: "request-rate", range: requestRate, distribution: o.requestDistribution }
    : { kind: "concurrency", range: concurrency ?? { start: 1, end: 1, step: 1 } };
  return {
    modelName: o.modelName,
    modelVersion: o.modelVersion,
    url,
    headers: o.header ?? {},
    tls: clientTls(o, url),
    protocol,
    batchSize: o.batchSize,
    load,
    measurementIntervalMs: o.measurementInterval,
    stabilityPercentage: o.stabilityPercentage,
    maxTrials: o.maxTrials,
    percentile,
    latencyThresholdMs,
    inputData: o.inputData,
    shapes: o.shape ?? new Map(),
    inputTensorFormat: o.inputTensorFormat,
    outputTensorFormat: o.outputTensorFormat,
    warmupRequestCount: o.warmupRequestCount,
    streaming: o.streaming,
    csvFile: o.latencyReportFile,
    // --json alone (commander's `true`) means stdout.
    jsonFile: o.json === true ? "-" : o.json,
    reportDir: o.report,
    verbose: o.verbose,
    prometheusPort: o.prometheusPort,
    prometheusLingerMs: o.prometheusLingerMs,
  };
}
