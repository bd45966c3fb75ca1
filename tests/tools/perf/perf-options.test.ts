import { describe, expect, it } from "vitest";
import { buildPerfCommand, parsePerfOptions } from "../../../tools/perf/perf-options";

/** A command that throws instead of printing, so a test sees commander's message. */
function quiet(): ReturnType<typeof buildPerfCommand> {
  return buildPerfCommand().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
}

const parse = (...argv: string[]) => parsePerfOptions(argv, quiet());

describe("parsePerfOptions", () => {
  it("applies perf_analyzer's defaults", () => {
    expect(parse("-m", "simple")).toMatchObject({
      modelName: "simple", url: "http://localhost:8000", protocol: "http", batchSize: 1,
      load: { kind: "concurrency", range: { start: 1, end: 1, step: 1 } }, measurementIntervalMs: 5000,
      stabilityPercentage: 10, maxTrials: 10, percentile: undefined, inputData: "random",
      inputTensorFormat: "binary", outputTensorFormat: "binary", jsonFile: undefined, csvFile: undefined,
    });
  });

  it("reads the load, shapes, formats and outputs", () => {
    const options = parse(
      "-m", "m", "-u", "127.0.0.1:9000", "--request-rate-range", "10:30:10", "--request-distribution", "poisson",
      "--shape", "X:5,3", "--shape", "Y:2", "--input-tensor-format", "json", "-f", "out.csv", "--json", "--report", "r", "-b", "4",
    );
    expect(options.url).toBe("http://127.0.0.1:9000");
    expect(options.load).toEqual({ kind: "request-rate", range: { start: 10, end: 30, step: 10 }, distribution: "poisson" });
    expect([...options.shapes]).toEqual([["X", [5, 3]], ["Y", [2]]]);
    expect(options).toMatchObject({ inputTensorFormat: "json", csvFile: "out.csv", jsonFile: "-", reportDir: "r", batchSize: 4 });
    expect(parse("-m", "m", "--json", "r.json").jsonFile).toBe("r.json");
    expect(parse("-m", "m", "-i", "grpc").url).toBe("grpc://localhost:8001");
    expect(parse("-m", "m", "-i", "grpc", "-u", "http://10.0.0.1:9001").url).toBe("grpc://10.0.0.1:9001");
  });

  it("reads perf_analyzer's -H headers and the Prometheus flags", () => {
    const options = parse("-m", "m", "-H", "admin-key:s3cret", "-H", "X-Trace: on", "--prometheus-port", "9102", "--prometheus-linger-ms", "60000");
    expect(options).toMatchObject({ headers: { "admin-key": "s3cret", "x-trace": "on" }, prometheusPort: 9102, prometheusLingerMs: 60000 });
    expect(parse("-m", "m")).toMatchObject({ headers: {}, prometheusPort: undefined, prometheusLingerMs: 0 });
    expect(() => parse("-m", "m", "-H", "no-colon")).toThrow(/expected NAME:VALUE/);
    expect(() => parse("-m", "m", "--prometheus-port", "-1")).toThrow(/must be an integer >= 0/);
  });

  it("rejects bad and contradictory flags with commander's one-line error", () => {
    expect(() => parse()).toThrow(/required option '-m, --model-name <name>' not specified/);
    expect(() => parse("-m", "m", "--concurrency-range", "0")).toThrow(/start of '0' must be a positive integer/);
    expect(() => parse("-m", "m", "--concurrency-range", "1", "--request-rate-range", "5")).toThrow(/cannot be combined/);
    expect(() => parse("-m", "m", "--concurrency-range", "1:0")).toThrow(/needs --latency-threshold/);
    expect(() => parse("-m", "m", "-u", "a b:1")).toThrow(/-u 'a b:1' is not host:port/);
    expect(() => parse("-m", "m", "--shape", "X")).toThrow(/expected NAME:d1,d2/);
    expect(() => parse("-m", "m", "--input-tensor-format", "xml")).toThrow(/Allowed choices are binary, json/);
    expect(() => parse("-m", "m", "--percentile", "100")).toThrow(/between 1 and 99/);
  });
});

describe("parsePerfOptions: TLS and headers (perf_analyzer's --ssl-* and -H)", () => {
  it("keeps https:// for HTTP, uses grpcs:// with --ssl-grpc-use-ssl, and reads the PEM files", () => {
    const pem = __filename; // any readable file stands in for a PEM here: it is only read, not parsed
    const https = parse("-m", "m", "-u", "https://10.0.0.1:8443", "--ssl-https-ca-certificates-file", pem, "--ssl-https-verify-host", "0", "-H", "Admin-Key: a:b", "-H", "x:1");
    expect(https.url).toBe("https://10.0.0.1:8443");
    expect(https.tls).toMatchObject({ verifyPeer: true, verifyHost: false, cert: undefined, key: undefined });
    expect(https.tls?.ca).toBeInstanceOf(Buffer);
    expect(https.headers).toEqual({ "admin-key": "a:b", x: "1" });
    const grpcs = parse("-m", "m", "-i", "grpc", "-u", "10.0.0.1:8001", "--ssl-grpc-use-ssl", "--ssl-grpc-certificate-chain-file", pem, "--ssl-grpc-private-key-file", pem);
    expect(grpcs.url).toBe("grpcs://10.0.0.1:8001");
    expect(grpcs.tls?.cert).toBeInstanceOf(Buffer);
    expect(parse("-m", "m", "-i", "grpc", "--ssl-grpc-use-ssl", "false").url).toBe("grpc://localhost:8001");
    expect(parse("-m", "m").tls).toBeUndefined();
  });

  it("refuses TLS flags that cannot apply", () => {
    expect(() => parse("-m", "m", "--ssl-https-ca-certificates-file", "/nonexistent.pem")).toThrow(/cannot read '\/nonexistent.pem': ENOENT/);
    expect(() => parse("-m", "m", "--ssl-https-ca-certificates-file", __filename)).toThrow(/need -i http and an https:\/\/ server URL/);
    expect(() => parse("-m", "m", "--ssl-https-verify-host", "3")).toThrow(/from 0 to 2/);
  });
});
