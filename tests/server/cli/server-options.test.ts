import { describe, expect, it } from "vitest";
import { buildCommand, DEFAULT_HEAP_GROWING_PERCENT, parseServerOptions } from "../../../server/cli/server-options";

const REPO = ["--model-repository", "/models"];

describe("parseServerOptions", () => {
  it("takes Triton's defaults for ports and readiness", () => {
    const options = parseServerOptions(REPO);
    expect(options.modelRepositories).toEqual(["/models"]);
    expect([options.httpPort, options.grpcPort, options.metricsPort]).toEqual([8000, 8001, 8002]);
    expect(options.strictReadiness).toBe(true);
    expect(options.modelControlMode).toBe("none");
  });

  it("lets the JS heap grow 4x past its live size before a full GC unless told otherwise", () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(300);
    expect(parseServerOptions(REPO).heapGrowingPercent).toBe(300);
    expect(parseServerOptions([...REPO, "--heap-growing-percent", "0"]).heapGrowingPercent).toBe(0);
    expect(parseServerOptions([...REPO, "--heap-growing-percent", "150"]).heapGrowingPercent).toBe(150);
  });

  it.each(["-1", "1001", "2.5", "lots"])("rejects --heap-growing-percent %s", (value) => {
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    expect(() => parseServerOptions([...REPO, "--heap-growing-percent", value], quiet)).toThrow(/heap-growing-percent/);
  });

  it("bounds --grpc-flow-control-window between HTTP/2's default window and its maximum", () => {
    expect(parseServerOptions(REPO).grpcFlowControlWindow).toBe(8 * 1024 * 1024);
    expect(parseServerOptions([...REPO, "--grpc-flow-control-window", "65535"]).grpcFlowControlWindow).toBe(65_535);
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    for (const value of ["65534", "2147483648"]) {
      expect(() => parseServerOptions([...REPO, "--grpc-flow-control-window", value], quiet)).toThrow(/grpc-flow-control-window/);
    }
  });

  it("bounds --grpc-max-frame-size to HTTP/2's SETTINGS_MAX_FRAME_SIZE range, 1 MiB by default", () => {
    expect(parseServerOptions(REPO).grpcMaxFrameSize).toBe(1_048_576);
    expect(parseServerOptions([...REPO, "--grpc-max-frame-size", "16777215"]).grpcMaxFrameSize).toBe(16_777_215);
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    for (const value of ["16383", "16777216"]) {
      expect(() => parseServerOptions([...REPO, "--grpc-max-frame-size", value], quiet)).toThrow(/grpc-max-frame-size/);
    }
  });

  it("takes Triton's log flags: every severity on, verbose off, the default format unless told otherwise", () => {
    const defaults = parseServerOptions(REPO);
    expect([defaults.logInfo, defaults.logWarning, defaults.logError, defaults.logVerbose, defaults.logFormat]).toEqual([true, true, true, 0, "default"]);
    const given = parseServerOptions([...REPO, "--log-info", "false", "--log-warning", "false", "--log-error", "false", "--log-verbose", "2", "--log-format", "ISO8601"]);
    expect([given.logInfo, given.logWarning, given.logError, given.logVerbose, given.logFormat]).toEqual([false, false, false, 2, "ISO8601"]);
  });

  it.each([["--log-format", "iso8601"], ["--log-info", "maybe"], ["--log-verbose", "-1"]])("rejects %s %s", (flag, value) => {
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    expect(() => parseServerOptions([...REPO, flag, value], quiet)).toThrow(new RegExp(flag.slice(2)));
  });

  it("reads Triton's --cache-config for the local response cache", () => {
    expect(parseServerOptions(REPO).responseCacheBytes).toBeUndefined();
    expect(parseServerOptions([...REPO, "--cache-config", "local,size=1048576"]).responseCacheBytes).toBe(1048576);
  });

  it.each([
    ["redis,host=localhost", /only the 'local' cache/],
    ["local,limit=5", /unknown key 'limit'/],
    ["local", /is not <cache>,<key>=<value>/],
    ["local,size=0", /must be an integer/],
  ])("rejects --cache-config %s", (value, message) => {
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    expect(() => parseServerOptions([...REPO, "--cache-config", value], quiet)).toThrow(message);
  });

  it("restarts dead instances after 100 ms, doubling up to 10 s, unless told otherwise", () => {
    expect(parseServerOptions(REPO)).toMatchObject({ instanceRestartBackoffMs: 100, instanceRestartMaxBackoffMs: 10_000 });
    expect(parseServerOptions([...REPO, "--instance-restart-backoff-ms", "0", "--instance-restart-max-backoff-ms", "500"]))
      .toMatchObject({ instanceRestartBackoffMs: 0, instanceRestartMaxBackoffMs: 500 });
    const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
    expect(() => parseServerOptions([...REPO, "--instance-restart-backoff-ms", "-1"], quiet)).toThrow(/instance-restart-backoff-ms/);
    expect(() => parseServerOptions([...REPO, "--instance-restart-backoff-ms", "2000", "--instance-restart-max-backoff-ms", "1000"]))
      .toThrow("--instance-restart-max-backoff-ms 1000 is below --instance-restart-backoff-ms 2000");
  });

  it("bounds BYTES tensors at 2^20 elements of at most 64 MiB each unless told otherwise", () => {
    expect(parseServerOptions(REPO)).toMatchObject({ maxBytesElements: 1 << 20, maxBytesElementSize: 1 << 26 });
    expect(parseServerOptions([...REPO, "--max-bytes-elements", "8", "--max-bytes-element-size", "16"])).toMatchObject({ maxBytesElements: 8, maxBytesElementSize: 16 });
  });

  it("bounds a gRPC message at the HTTP body's 64 MiB (not Triton's 2 GiB) and requests in flight at 1 GiB unless told otherwise", () => {
    expect(parseServerOptions(REPO)).toMatchObject({ grpcMaxMessageSize: 1 << 26, httpMaxInputSize: 1 << 26, maxInflightRequestBytes: 1 << 30 });
    expect(parseServerOptions([...REPO, "--grpc-max-message-size", "2147483647", "--max-inflight-request-bytes", "1024"]))
      .toMatchObject({ grpcMaxMessageSize: 2 ** 31 - 1, maxInflightRequestBytes: 1024 });
  });

  it.each([["--max-bytes-elements", "0"], ["--max-bytes-elements", "2147483648"], ["--max-bytes-element-size", "-1"], ["--max-bytes-element-size", "4294967296"]])(
    "rejects %s %s", (flag, value) => {
      const quiet = buildCommand().configureOutput({ writeErr: () => undefined });
      expect(() => parseServerOptions([...REPO, flag, value], quiet)).toThrow(/must be an integer/);
    },
  );

  it("requires a model repository", () => {
    expect(() => parseServerOptions([])).toThrow("--model-repository is required");
  });
});

describe("--trace-config", () => {
  const quiet = (): ReturnType<typeof buildCommand> => buildCommand().configureOutput({ writeErr: () => undefined });

  it("defaults to Triton's: tracing off, rate 1000, no count limit, one file at shutdown", () => {
    expect(parseServerOptions(REPO).traceSetting).toEqual({ level: [], rate: 1000, count: -1, logFrequency: 0, file: "" });
  });

  it("reads Triton's global and triton-mode settings", () => {
    const options = parseServerOptions([
      ...REPO, "--trace-config", "triton,file=/tmp/t.json", "--trace-config", "triton,log-frequency=50", "--trace-config", "rate=100",
      "--trace-config", "level=TIMESTAMPS", "--trace-config", "count=100", "--trace-config", "mode=triton",
    ]);
    expect(options.traceSetting).toEqual({ level: ["TIMESTAMPS"], rate: 100, count: 100, logFrequency: 50, file: "/tmp/t.json" });
    expect(parseServerOptions([...REPO, "--trace-config", "level=TIMESTAMPS", "--trace-config", "level=OFF"]).traceSetting.level).toEqual([]);
  });

  it("adds repeated levels up as Triton ORs them (command_line_parser.cc), in Triton's order", () => {
    const level = (...values: string[]) => parseServerOptions([...REPO, ...values.flatMap((value) => ["--trace-config", `level=${value}`])]).traceSetting.level;
    expect(level("TENSORS")).toEqual(["TENSORS"]);
    expect(level("tensors", "TIMESTAMPS")).toEqual(["TIMESTAMPS", "TENSORS"]);
    expect(level("TENSORS", "OFF")).toEqual([]);
  });

  it.each([
    ["mode=opentelemetry", /opentelemetry/], ["opentelemetry,url=localhost:4318", /opentelemetry/],
    ["rate=-1", /integer/], ["count=-2", /integer/], ["triton,rate=5", /unknown setting 'rate'/], ["verbose", /is not \[<mode>,\]<setting>=<value>/],
    ["level=LOUD", /not OFF, TIMESTAMPS or TENSORS/],
  ])("refuses --trace-config %s", (value, message) => {
    expect(() => parseServerOptions([...REPO, "--trace-config", value], quiet())).toThrow(message);
  });
});
