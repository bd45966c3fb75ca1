import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCommand, parseServerOptions } from "../../../server/cli/server-options";
import { createTestCertificates, type TestCertificates } from "../../helpers/test-certificates";

const REPO = ["--model-repository", "/models"];
const SECRET = "s3cr3t-admin-value";
const quiet = () => buildCommand().configureOutput({ writeErr: () => undefined });
const sources = (env: Record<string, string> = {}, files: Record<string, string> = {}) => ({
  env,
  readFile: (file: string): string => {
    if (!(file in files)) throw Object.assign(new Error(`ENOENT: ${file}`), { code: "ENOENT" });
    return files[file]!;
  },
});
const parse = (args: readonly string[], secrets = sources()) => parseServerOptions([...REPO, ...args], quiet(), secrets);

/** Expects the flags to be refused with a message matching `message`, which never shows the secret. */
function expectRefused(args: readonly string[], message: RegExp, secrets = sources()): void {
  let thrown: Error | undefined;
  try {
    parse(args, secrets);
  } catch (error) {
    thrown = error as Error;
  }
  expect(thrown?.message).toMatch(message);
  expect(thrown?.message).not.toContain(SECRET);
}

describe("--http-restricted-api / --grpc-restricted-protocol", () => {
  it("restricts each listed group to its header and value, leaving the others open", () => {
    const options = parse([
      "--http-restricted-api", `model-repository,model-config:Admin-Key=${SECRET}`,
      "--http-restricted-api", "inference:infer-key=i",
      "--grpc-restricted-protocol", `statistics,trace:admin-key=${SECRET}`,
    ]);
    expect(Object.fromEntries(options.httpRestrictedApis)).toEqual({
      "model-repository": { header: "admin-key", value: SECRET },
      "model-config": { header: "admin-key", value: SECRET },
      inference: { header: "infer-key", value: "i" },
    });
    expect([...options.grpcRestrictedProtocols.keys()]).toEqual(["statistics", "trace"]);
    expect(parse([]).httpRestrictedApis.size).toBe(0);
  });

  it("reads the value from an environment variable or a file (trimmed), as a Kubernetes Secret provides it", () => {
    const secrets = sources({ INFERENCE_ADMIN_KEY: SECRET }, { "/run/secrets/admin": `  ${SECRET}\n` });
    const options = parse([
      "--http-restricted-api", "model-repository,statistics:admin-key=env:INFERENCE_ADMIN_KEY",
      "--grpc-restricted-protocol", "model-repository:admin-key=file:/run/secrets/admin",
    ], secrets);
    expect(options.httpRestrictedApis.get("statistics")).toEqual({ header: "admin-key", value: SECRET });
    expect(options.grpcRestrictedProtocols.get("model-repository")).toEqual({ header: "admin-key", value: SECRET });
  });

  it("takes the flags exactly as the Pulumi program passes them (--flag=value, the value from a Secret's variable)", () => {
    const groups = "model-repository,model-config,statistics,trace,logging,shared-memory";
    const options = parse([
      `--http-restricted-api=${groups}:admin-key=env:INFERENCE_ADMIN_KEY`, `--grpc-restricted-protocol=${groups}:admin-key=env:INFERENCE_ADMIN_KEY`,
    ], sources({ INFERENCE_ADMIN_KEY: SECRET }));
    for (const restrictions of [options.httpRestrictedApis, options.grpcRestrictedProtocols]) {
      expect([...restrictions.keys()]).toEqual(groups.split(","));
      expect(new Set([...restrictions.values()].map((r) => `${r.header}=${r.value}`))).toEqual(new Set([`admin-key=${SECRET}`]));
    }
  });

  it.each([
    [["--http-restricted-api", "model-repository:admin-key=env:INFERENCE_ADMIN_KEY"], /environment variable INFERENCE_ADMIN_KEY .* not set or is empty/],
    [["--grpc-restricted-protocol", "health:k=file:/run/secrets/none"], /--grpc-restricted-protocol: cannot read the value from file '\/run\/secrets\/none': ENOENT/],
    [["--http-restricted-api", "health:k=file:/run/secrets/empty"], /file '\/run\/secrets\/empty' is empty/],
    [["--http-restricted-api", `inferences:k=${SECRET}`], /unknown API group 'inferences' \(groups: health, metadata, inference, shared-memory/],
    [["--http-restricted-api", `health:a=${SECRET}`, "--http-restricted-api", "metadata,health:b=v"], /API group 'health' can not be specified in multiple config groups/],
    [["--http-restricted-api", SECRET], /is not <api-groups>:<header>=<value>/],
    [["--http-restricted-api", `health:bad header=${SECRET}`], /'bad header' is not a valid header name/],
    [["--http-restricted-api", `health:k=${SECRET}\u0007`], /printable ASCII/],
  ])("refuses %j at start-up with a clear message that does not show the value", (args, message) => {
    expectRefused(args, message, sources({ INFERENCE_ADMIN_KEY: "" }, { "/run/secrets/empty": " \n" }));
  });
});

describe("TLS flags", () => {
  let certs: TestCertificates;
  beforeAll(() => {
    certs = createTestCertificates();
  });
  afterAll(() => certs?.remove());

  it("takes host names for --http-allowed-host (none by default, '*' for any), and refuses a URL or a port", () => {
    expect(parse([]).httpAllowedHosts).toEqual([]);
    expect(parse(["--http-allowed-host", "triton.ml.svc", "--http-allowed-host", "*"]).httpAllowedHosts).toEqual(["triton.ml.svc", "*"]);
    expectRefused(["--http-allowed-host", "http://triton.ml.svc"], /--http-allowed-host 'http:\/\/triton.ml.svc' is not a host name/);
    expectRefused(["--http-allowed-host", "triton:8000"], /is not a host name \(no scheme, no port\)/);
  });

  it("reads Triton's gRPC TLS flags and their HTTP twins", () => {
    const { serverCert, serverKey, caCert } = certs.files;
    const options = parse([
      "--grpc-use-ssl", "--grpc-server-cert", serverCert, "--grpc-server-key", serverKey,
      "--http-use-ssl-mutual", "--http-server-cert", serverCert, "--http-server-key", serverKey, "--http-root-cert", caCert,
    ]);
    expect(options.grpcTls).toEqual({ cert: certs.read("serverCert"), key: certs.read("serverKey"), rootCert: undefined, mutual: false });
    expect(options.httpTls).toMatchObject({ rootCert: certs.read("caCert"), mutual: true });
    expect(parse([]).httpTls).toBeUndefined();
    expect(parse(["--grpc-use-ssl", "false", "--grpc-server-cert", serverCert]).grpcTls).toBeUndefined();
  });

  it("refuses incomplete or unusable TLS settings, naming the flag", () => {
    const { serverCert, serverKey, clientKey } = certs.files;
    expectRefused(["--http-use-ssl"], /--http-use-ssl needs --http-server-cert and --http-server-key/);
    expectRefused(["--grpc-use-ssl-mutual", "--grpc-server-cert", serverCert, "--grpc-server-key", serverKey], /--grpc-use-ssl-mutual needs --grpc-root-cert/);
    expectRefused(["--grpc-use-ssl", "--grpc-server-cert", "/nonexistent.pem", "--grpc-server-key", serverKey], /--grpc-server-cert: cannot read '\/nonexistent.pem': ENOENT/);
    expectRefused(["--http-use-ssl", "--http-server-cert", serverCert, "--http-server-key", clientKey], /--http-server-cert \/ --http-server-key .*: .*key values mismatch/);
  });
});

describe("connection limits", () => {
  it("waits on slow clients far less than Node's 60 s / 300 s by default, and keeps Google's load balancer connections", () => {
    const options = parse([]);
    expect(options.httpLimits).toEqual({
      headerTimeoutMs: 10_000, requestTimeoutMs: 60_000, idleTimeoutMs: 5_000, writeTimeoutMs: 10_000, keepAliveTimeoutMs: 620_000, maxConnections: 4096,
    });
    expect(options.grpcLimits).toEqual({
      keepaliveTimeMs: 7_200_000, keepaliveTimeoutMs: 20_000, maxConnectionIdleMs: 300_000, maxConnectionAgeMs: 0, maxConnectionAgeGraceMs: 0, maxConcurrentStreams: 1000,
      requestTimeoutMs: 60_000, writeTimeoutMs: 10_000, maxConnections: 4096,
    });
  });

  it("takes every limit from its flag", () => {
    const options = parse([
      "--http-header-timeout-ms", "100", "--http-request-timeout-ms", "200", "--http-idle-timeout-ms", "0", "--http-write-timeout-ms", "400",
      "--http-keepalive-timeout-ms", "500", "--http-max-connections", "0",
      "--grpc-keepalive-time", "1000", "--grpc-keepalive-timeout", "2000", "--grpc-max-connection-idle", "3000",
      "--grpc-max-connection-age", "4000", "--grpc-max-connection-age-grace", "5000", "--grpc-max-concurrent-streams", "6",
      "--grpc-request-timeout-ms", "7000", "--grpc-write-timeout-ms", "0", "--grpc-max-connections", "9",
    ]);
    expect(options.httpLimits).toEqual({ headerTimeoutMs: 100, requestTimeoutMs: 200, idleTimeoutMs: 0, writeTimeoutMs: 400, keepAliveTimeoutMs: 500, maxConnections: 0 });
    expect(options.grpcLimits).toEqual({
      keepaliveTimeMs: 1000, keepaliveTimeoutMs: 2000, maxConnectionIdleMs: 3000, maxConnectionAgeMs: 4000, maxConnectionAgeGraceMs: 5000, maxConcurrentStreams: 6,
      requestTimeoutMs: 7000, writeTimeoutMs: 0, maxConnections: 9,
    });
  });

  it.each([
    [["--http-header-timeout-ms", "2000", "--http-request-timeout-ms", "1000"], /must not exceed --http-request-timeout-ms/],
    [["--http-idle-timeout-ms", "-1"], /must be an integer/],
    [["--http-keepalive-timeout-ms", "0"], /must be an integer in \[1,/],
    [["--grpc-max-concurrent-streams", "0"], /must be an integer in \[1,/],
    [["--grpc-request-timeout-ms", "1.5"], /must be an integer/],
    [["--grpc-write-timeout-ms", "-1"], /must be an integer/],
    [["--grpc-max-connections", "many"], /must be an integer/],
  ])("refuses %j", (args, message) => {
    expectRefused(args, message);
  });
});

describe("secret sources of the real process", () => {
  it("reads env: from the process environment and file: from disk", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "restricted-"));
    try {
      writeFileSync(path.join(dir, "key"), `${SECRET}\n`);
      process.env["NETWORK_OPTIONS_TEST_KEY"] = SECRET;
      const options = parseServerOptions([
        ...REPO, "--http-restricted-api", "health:k=env:NETWORK_OPTIONS_TEST_KEY", "--grpc-restricted-protocol", `health:k=file:${path.join(dir, "key")}`,
      ], quiet());
      expect(options.httpRestrictedApis.get("health")?.value).toBe(SECRET);
      expect(options.grpcRestrictedProtocols.get("health")?.value).toBe(SECRET);
    } finally {
      delete process.env["NETWORK_OPTIONS_TEST_KEY"];
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
