import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBIAN_PYTHON } from "../../common/debian-python";
import { type RunningServer, startServer } from "../helpers/server-process";
import { PROTO_DIRECTORY } from "./grpc-transport";

const run = promisify(execFile);
const CLIENT_SCRIPT = path.join(__dirname, "python", "simple_grpc_client.py");

describe("independent check: Debian's python3-grpcio with stubs generated from our protos", () => {
  let server: RunningServer;
  let stubs: string;
  beforeAll(async () => {
    stubs = mkdtempSync(path.join(os.tmpdir(), "grpc-python-stubs-"));
    await run(DEBIAN_PYTHON, [
      "-m", "grpc_tools.protoc", `-I${PROTO_DIRECTORY}`, `--python_out=${stubs}`, `--grpc_python_out=${stubs}`,
      "grpc_service.proto", "model_config.proto", "health.proto",
    ], { timeout: 60_000 });
    server = await startServer({ services: ["http", "grpc"] });
  });
  afterAll(async () => {
    await server?.stop();
    if (stubs !== undefined) rmSync(stubs, { recursive: true, force: true });
  });

  it("checks field numbers, health, metadata, config, raw and typed ModelInfer and the stream on `simple`", async () => {
    const { stdout } = await run(DEBIAN_PYTHON, [CLIENT_SCRIPT, stubs, server.grpcAddress!], { timeout: 60_000 });
    expect(stdout).toMatch(/ok: ModelInferRequest field numbers are Triton's/);
    expect(stdout).toMatch(/ok: ModelInfer \(raw_input_contents\): OUTPUT0 is INPUT0 \+ INPUT1/);
    expect(stdout).toMatch(/ok: ModelStreamInfer reports the failure in error_message/);
    expect(stdout).toMatch(/ok: ModelInfer of a 602,112-byte FP32 tensor echoes it byte for byte/);
    expect(stdout.trim().split("\n").at(-1)).toBe("all checks passed");
  });

  it("exits non-zero when it gets no Triton answers (the HTTP port instead of gRPC)", async () => {
    // A client that reported success here would prove nothing in the test above.
    const wrong = `127.0.0.1:${new URL(server.httpUrl).port}`;
    const outcome = await run(DEBIAN_PYTHON, [CLIENT_SCRIPT, stubs, wrong], { timeout: 60_000 }).then(() => 0, (e: { code?: number }) => e.code ?? -1);
    expect(outcome).not.toBe(0);
  });
});
