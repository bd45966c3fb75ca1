import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient, type InferenceClientOptions, UnavailableError } from "../../client/index";
import { runPerf } from "../helpers/perf-process";
import { openRaw } from "../helpers/raw-connection";
import { type RunningServer, startServer } from "../helpers/server-process";
import { createTestCertificates, type TestCertificates } from "../helpers/test-certificates";

const ADMIN_KEY = "tls-test-admin-value";
const simpleInputs = [0, 1].map((i) => ({ name: `INPUT${i}`, shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, j) => j + i) }));

let certs: TestCertificates;
beforeAll(() => {
  certs = createTestCertificates();
});
afterAll(() => certs?.remove());

/** Runs `use` with a client for `url`, closing it after. */
async function withClient<T>(options: InferenceClientOptions, use: (client: InferenceClient) => Promise<T>): Promise<T> {
  const client = new InferenceClient(options);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

async function inferSimple(options: InferenceClientOptions): Promise<Int32Array> {
  return withClient(options, async (client) => (await client.infer("simple", simpleInputs, { outputs: ["OUTPUT0"] })).data("OUTPUT0", "INT32"));
}

const expectedSum = Int32Array.from({ length: 16 }, (_, j) => 2 * j + 1);

describe("TLS on both ports (--http-use-ssl, --grpc-use-ssl)", () => {
  let server: RunningServer;
  let httpsUrl: string;
  let grpcsUrl: string;
  beforeAll(async () => {
    const { serverCert, serverKey } = certs.files;
    server = await startServer({
      services: ["http", "grpc"],
      args: [
        "--model-control-mode", "explicit", "--load-model", "simple",
        "--http-use-ssl", "--http-server-cert", serverCert, "--http-server-key", serverKey,
        "--grpc-use-ssl", "--grpc-server-cert", serverCert, "--grpc-server-key", serverKey,
        "--http-restricted-api", `statistics:admin-key=${ADMIN_KEY}`, "--grpc-restricted-protocol", `statistics:admin-key=${ADMIN_KEY}`,
      ],
    });
    httpsUrl = server.httpUrl.replace("http://", "https://");
    grpcsUrl = `grpcs://${server.grpcAddress}`;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("logs that each endpoint serves TLS", () => {
    expect(server.logs()).toMatch(/"service":"http","port":\d+,"tls":true/);
    expect(server.logs()).toMatch(/"service":"grpc","port":\d+,"tls":true/);
  });

  it("serves the client over https:// and grpcs:// when it trusts the CA", async () => {
    const tls = { ca: certs.read("caCert") };
    expect(await inferSimple({ url: httpsUrl, tls })).toEqual(expectedSum);
    expect(await inferSimple({ url: grpcsUrl, tls })).toEqual(expectedSum);
    expect(await inferSimple({ url: httpsUrl, tls: { ...tls, verifyHost: false } })).toEqual(expectedSum);
  });

  it("is not reachable in plaintext, nor by a client that does not trust its certificate", async () => {
    await expect(withClient({ url: server.httpUrl, timeoutMs: 5000 }, (client) => client.isServerLive())).rejects.toThrow();
    await expect(withClient({ url: `grpc://${server.grpcAddress}`, timeoutMs: 5000 }, (client) => client.isServerLive())).rejects.toBeInstanceOf(UnavailableError);
    await expect(withClient({ url: httpsUrl }, (client) => client.isServerLive())).rejects.toThrow(/self[- ]signed|unable to (verify|get local issuer)/i);
    await expect(withClient({ url: grpcsUrl, timeoutMs: 5000 }, (client) => client.isServerLive())).rejects.toBeInstanceOf(UnavailableError);
    // Only a client told not to check may skip verification.
    expect(await withClient({ url: httpsUrl, tls: { verifyPeer: false } }, (client) => client.isServerLive())).toBe(true);
  });

  it.each([
    ["http", (url: string) => ["-u", url, "--ssl-https-ca-certificates-file", certs.files.caCert, "-H", `admin-key:${ADMIN_KEY}`]],
    ["grpc", (url: string) => ["-i", "grpc", "-u", url, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", certs.files.caCert, "-H", `triton-grpc-protocol-admin-key:${ADMIN_KEY}`]],
  ] as const)("inference-perf measures over %s with TLS, reading restricted statistics with -H", async (protocol, flags) => {
    const url = protocol === "http" ? httpsUrl : server.grpcAddress!;
    const run = await runPerf(["-m", "simple", ...flags(url), "-p", "300", "-r", "3", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { url: string; results: { server: { successCount: number } }[] };
    expect(report.url).toMatch(protocol === "http" ? /^https:\/\// : /^grpcs:\/\//);
    expect(report.results[0]!.server.successCount).toBeGreaterThan(0);
  });

  it("inference-perf names the TLS problem when it does not trust the server", async () => {
    const run = await runPerf(["-m", "simple", "-u", httpsUrl, "-p", "300", "-r", "3"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/certificate/i);
  });
});

describe("mutual TLS (--http-use-ssl-mutual, --grpc-use-ssl-mutual)", () => {
  let server: RunningServer;
  let httpsUrl: string;
  let grpcsUrl: string;
  beforeAll(async () => {
    const { serverCert, serverKey, caCert } = certs.files;
    server = await startServer({
      services: ["http", "grpc"],
      args: [
        "--model-control-mode", "explicit", "--load-model", "simple", "--http-idle-timeout-ms", "1000", "--grpc-request-timeout-ms", "1000",
        "--http-use-ssl-mutual", "--http-server-cert", serverCert, "--http-server-key", serverKey, "--http-root-cert", caCert,
        "--grpc-use-ssl-mutual", "--grpc-server-cert", serverCert, "--grpc-server-key", serverKey, "--grpc-root-cert", caCert,
      ],
    });
    httpsUrl = server.httpUrl.replace("http://", "https://");
    grpcsUrl = `grpcs://${server.grpcAddress}`;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves a client whose certificate the root CA signed", async () => {
    const tls = { ca: certs.read("caCert"), cert: certs.read("clientCert"), key: certs.read("clientKey") };
    expect(await inferSimple({ url: httpsUrl, tls })).toEqual(expectedSum);
    expect(await inferSimple({ url: grpcsUrl, tls })).toEqual(expectedSum);
    const run = await runPerf([
      "-m", "simple", "-i", "grpc", "-u", server.grpcAddress!, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", certs.files.caCert,
      "--ssl-grpc-private-key-file", certs.files.clientKey, "--ssl-grpc-certificate-chain-file", certs.files.clientCert, "-p", "300", "-r", "3",
    ]);
    expect(run.code, run.stderr).toBe(0);
  });

  it.each([
    ["no client certificate", {}],
    ["a certificate from another CA", { cert: "strangerCert", key: "strangerKey" }],
  ] as const)("refuses a client with %s on both ports", async (_name, identity) => {
    const tls = {
      ca: certs.read("caCert"),
      ...("cert" in identity ? { cert: certs.read(identity.cert), key: certs.read(identity.key) } : {}),
    };
    await expect(withClient({ url: httpsUrl, tls, timeoutMs: 5000 }, (client) => client.isServerLive())).rejects.toThrow();
    await expect(withClient({ url: grpcsUrl, tls, timeoutMs: 5000 }, (client) => client.isServerLive())).rejects.toBeInstanceOf(UnavailableError);
  });

  it("closes a connection whose TLS handshake never comes: HTTP's within the idle timeout, gRPC's within the request timeout", async () => {
    const closedAfterMs = async (port: number): Promise<number> => {
      const started = performance.now();
      return (await (await openRaw(port)).closed) - started;
    };
    // Node's TLS servers otherwise wait 120 s for a handshake.
    for (const closedMs of await Promise.all([closedAfterMs(server.httpPort!), closedAfterMs(server.grpcPort!)])) {
      expect(closedMs).toBeGreaterThanOrEqual(900);
      expect(closedMs).toBeLessThan(3000);
    }
  });
});
