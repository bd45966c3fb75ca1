import http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";

/**
 * What a gRPC client is granted: the receive window of its SETTINGS (per stream), the connection's window, and the
 * largest frame it may send.
 */
async function grantedSettings(grpcAddress: string): Promise<{ stream: number; connection: number; frame: number }> {
  const session = http2.connect(`http://${grpcAddress}`);
  try {
    await new Promise<void>((resolve, reject) => {
      session.once("remoteSettings", () => resolve());
      session.once("error", reject);
    });
    // The connection's WINDOW_UPDATE follows the SETTINGS frame; a ping round trip makes sure it has arrived.
    await new Promise<void>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve())));
    const { initialWindowSize = 65_535, maxFrameSize = 16_384 } = session.remoteSettings;
    return { stream: initialWindowSize, connection: session.state.remoteWindowSize ?? 65_535, frame: maxFrameSize };
  } finally {
    session.close();
  }
}

describe("gRPC HTTP/2 flow control and frames (--grpc-flow-control-window, --grpc-max-frame-size)", () => {
  let repository: string;
  const servers: RunningServer[] = [];
  beforeAll(() => {
    repository = mkdtempSync(path.join(os.tmpdir(), "grpc-window-"));
    writeSimpleModel(repository, "simple", "max_batch_size: 8\n");
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(repository, { recursive: true, force: true });
  });

  it("grants clients an 8 MiB stream and connection window and 1 MiB frames by default, not Node's 64 KiB and 16 KiB", async () => {
    const server = await startServer({ repository, services: ["http", "grpc"] });
    servers.push(server);
    expect(await grantedSettings(server.grpcAddress!)).toEqual({ stream: 8 * 1024 * 1024, connection: 8 * 1024 * 1024, frame: 1_048_576 });
  });

  it("grants the configured window and frame size", async () => {
    const args = ["--grpc-flow-control-window", "1048576", "--grpc-max-frame-size", "16384"];
    const server = await startServer({ repository, services: ["http", "grpc"], args });
    servers.push(server);
    expect(await grantedSettings(server.grpcAddress!)).toEqual({ stream: 1_048_576, connection: 1_048_576, frame: 16_384 });
  });
});
