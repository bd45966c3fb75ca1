import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, runServerToExit, startServer } from "../helpers/server-process";
import { grpcCallError as grpcError, type GrpcMessage, GrpcTestClient, streamResponses } from "./grpc-transport";

const ADMIN_KEY = "adm1n-Value-7f3c";
const INFER_KEY = "1nfer-Value-91aa";
const WRONG_KEY = "wrong-Value-0000";
const ADMIN = { "admin-key": ADMIN_KEY };
const GRPC_ADMIN = { "triton-grpc-protocol-admin-key": ADMIN_KEY };
const GRPC_INFER = { "triton-grpc-protocol-infer-key": INFER_KEY };

const simpleInputs = [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, j) => j) }));
const simpleBody = JSON.stringify({ inputs: simpleInputs });
const grpcInfer: GrpcMessage = {
  model_name: "simple",
  inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], contents: { int_contents: Array.from({ length: 16 }, (_, j) => j) } })),
};

interface RestCase {
  readonly group: string;
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  /** What it answers once allowed in. */
  readonly allowed: number;
}

/** Every restricted REST API group, with a request each. */
const REST_CASES: readonly RestCase[] = [
  { group: "model-repository", method: "POST", path: "/v2/repository/index", body: "{}", allowed: 200 },
  { group: "model-config", method: "GET", path: "/v2/models/simple/config", allowed: 200 },
  { group: "statistics", method: "GET", path: "/v2/models/simple/stats", allowed: 200 },
  { group: "statistics", method: "GET", path: "/v2/models/stats", allowed: 200 },
  { group: "shared-memory", method: "GET", path: "/v2/systemsharedmemory/status", allowed: 200 },
  { group: "shared-memory", method: "POST", path: "/v2/cudasharedmemory/region/r/register", body: "{}", allowed: 501 },
  { group: "trace", method: "GET", path: "/v2/trace/setting", allowed: 200 },
  { group: "trace", method: "POST", path: "/v2/models/simple/trace/setting", body: "{}", allowed: 200 },
  { group: "logging", method: "GET", path: "/v2/logging", allowed: 200 },
  { group: "logging", method: "POST", path: "/v2/logging", body: "{}", allowed: 200 },
];

describe("restricted APIs (--http-restricted-api, --grpc-restricted-protocol)", () => {
  let server: RunningServer;
  let grpc: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({
      services: ["http", "grpc", "metrics"],
      env: { TEST_ADMIN_KEY: ADMIN_KEY },
      args: [
        "--log-verbose", "1",
        // As the Pulumi program runs it: the admin value from a Kubernetes Secret through the environment.
        "--http-restricted-api", "model-repository,model-config,statistics,trace,logging,shared-memory:admin-key=env:TEST_ADMIN_KEY",
        "--grpc-restricted-protocol", "model-repository,model-config,statistics,trace,logging,shared-memory:admin-key=env:TEST_ADMIN_KEY",
        "--grpc-restricted-protocol", `inference,health:infer-key=${INFER_KEY}`,
      ],
    });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
  });

  const rest = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${server.httpUrl}${path}`, { method, headers: body === undefined ? headers : { ...headers, "content-type": "application/json" }, body });

  it.each(REST_CASES)("REST $group: $method $path answers 403 in Triton's shape without the header or with a wrong value", async ({ method, path, body }) => {
    const attempts: Record<string, string>[] = [{}, { "admin-key": WRONG_KEY }, { "other-key": ADMIN_KEY }];
    for (const headers of attempts) {
      const response = await rest(method, path, headers, body);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: "This API is restricted, expecting header 'admin-key'" });
    }
  });

  it.each(REST_CASES)("REST $group: $method $path is served with the header (any case of its name)", async ({ method, path, body, allowed }) => {
    expect((await rest(method, path, ADMIN, body)).status).toBe(allowed);
    expect((await rest(method, path, { "Admin-Key": ADMIN_KEY }, body)).status).toBe(allowed);
  });

  it("checks the header before the verb, as Triton does", async () => {
    expect((await rest("DELETE", "/v2/models/simple/config")).status).toBe(403);
    expect((await rest("DELETE", "/v2/models/simple/config", ADMIN)).status).toBe(405);
  });

  it("leaves the groups not listed open: health, metadata and inference over REST, and the metrics port", async () => {
    expect((await rest("GET", "/v2/health/ready")).status).toBe(200);
    expect((await rest("GET", "/v2/models/simple/ready")).status).toBe(200);
    expect((await rest("GET", "/v2")).status).toBe(200);
    expect((await rest("GET", "/v2/models/simple")).status).toBe(200);
    expect((await rest("POST", "/v2/models/simple/infer", {}, simpleBody)).status).toBe(200);
    const metrics = await fetch(`${server.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("nv_inference_request_success");
  });

  it.each([
    ["RepositoryIndex", {}, "admin"], ["ModelConfig", { name: "simple" }, "admin"], ["ModelStatistics", { name: "simple" }, "admin"],
    ["SystemSharedMemoryStatus", {}, "admin"], ["TraceSetting", {}, "admin"], ["LogSettings", {}, "admin"],
    ["ServerLive", {}, "infer"], ["ModelReady", { name: "simple" }, "infer"], ["ModelInfer", grpcInfer, "infer"],
  ] as const)("gRPC %s answers UNAVAILABLE with Triton's message without its metadata", async (rpc, request, key) => {
    for (const headers of [{}, { [`triton-grpc-protocol-${key}-key`]: WRONG_KEY }, { [`${key}-key`]: key === "admin" ? ADMIN_KEY : INFER_KEY }]) {
      const error = await grpcError(grpc.unary(rpc, request, {}, headers));
      expect(error.code).toBe(status.UNAVAILABLE);
      expect(error.details).toBe(`This protocol is restricted, expecting header 'triton-grpc-protocol-${key}-key'`);
    }
  });

  it("gRPC calls with the right metadata are served; unrestricted groups need none", async () => {
    expect(await grpc.unary("RepositoryIndex", {}, {}, GRPC_ADMIN)).toHaveProperty("models");
    expect(await grpc.unary("ModelStatistics", { name: "simple" }, {}, GRPC_ADMIN)).toHaveProperty("model_stats");
    expect(await grpc.unary("TraceSetting", {}, {}, GRPC_ADMIN)).toHaveProperty("settings");
    expect(await grpc.unary("LogSettings", {}, {}, GRPC_ADMIN)).toHaveProperty("settings.log_info", { bool_param: true, parameter_choice: "bool_param" });
    expect(await grpc.unary("ServerLive", {}, {}, GRPC_INFER)).toEqual({ live: true });
    expect(await grpc.unary<{ outputs: unknown[] }>("ModelInfer", grpcInfer, {}, GRPC_INFER)).toHaveProperty("outputs");
    expect(await grpc.unary("ServerMetadata", {})).toHaveProperty("name", "triton");
    // The admin value does not open another group's restriction.
    expect((await grpcError(grpc.unary("ServerReady", {}, {}, { "triton-grpc-protocol-infer-key": ADMIN_KEY }))).code).toBe(status.UNAVAILABLE);
  });

  it("gRPC's standard health check answers Triton's own message; ModelStreamInfer is refused before it reads", async () => {
    const health = await grpcError(grpc.unary("Check", { service: "" }));
    expect(health.code).toBe(status.UNAVAILABLE);
    expect(health.details).toBe("Missing or mismatched restricted header");
    expect(await grpc.unary("Check", { service: "" }, {}, GRPC_INFER)).toEqual({ status: "SERVING" });
    const refused = await new Promise<{ code: status; details: string }>((resolve) => {
      const stream = grpc.modelStreamInfer();
      stream.on("data", () => undefined);
      stream.on("error", (error: { code: status; details: string }) => resolve(error));
      stream.write(grpcInfer);
    });
    expect(refused).toMatchObject({ code: status.UNAVAILABLE, details: "This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'" });
    const served = await streamResponses(grpc.modelStreamInfer(GRPC_INFER), [grpcInfer]);
    expect(served).toHaveLength(1);
    expect(served[0]!["error_message"]).toBe("");
  });

  it("never writes a restriction value to its log, even at --log-verbose 1", async () => {
    // Every way of sending the values (right, wrong, in the wrong header) has been exercised above; once more here.
    await rest("GET", "/v2/models/stats", { "admin-key": WRONG_KEY });
    await rest("GET", "/v2/models/stats", ADMIN);
    await grpcError(grpc.unary("ModelStatistics", {}, {}, { "triton-grpc-protocol-admin-key": WRONG_KEY }));
    const logs = server.logs();
    expect(logs).toContain('"level":20'); // debug lines were written
    expect(logs).toContain("admin-key");
    for (const value of [ADMIN_KEY, INFER_KEY, WRONG_KEY]) expect(logs).not.toContain(value);
  });
});

describe("restricted API values from the environment", () => {
  it("refuses to start when the environment variable is missing, naming it and not serving anything", async () => {
    const { code, output } = await runServerToExit([
      "--model-repository", "/nonexistent", "--http-restricted-api", "model-repository:admin-key=env:TEST_UNSET_ADMIN_KEY",
    ]);
    expect(code).toBe(2);
    expect(output).toMatch(/--http-restricted-api: environment variable TEST_UNSET_ADMIN_KEY \(named by 'env:TEST_UNSET_ADMIN_KEY'\) is not set or is empty/);
  });
});
