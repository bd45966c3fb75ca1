import http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";

/** The receive windows a gRPC client is granted: its SETTINGS (per stream) and the connection's window. */
async function grantedWindows(grpcAddress: string): Promise<{ stream: number; connection: number }> {
  const session = http2.connect(`http://${grpcAddress}`);
  try {
    await new Promise<void>((resolve, reject) => {
      session.once("remoteSettings", () => resolve());
      session.once("error", reject);
    });
    // The connection's WINDOW_UPDATE follows the SETTINGS frame; a ping round trip makes sure it has arrived.
    await new Promise<void>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve())));
    return { stream: session.remoteSettings.initialWindowSize ?? 65_535, connection: session.state.remoteWindowSize ?? 65_535 };
  } finally {
    session.close();
  }
}

describe("gRPC HTTP/2 flow control (--grpc-flow-control-window)", () => {
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

  it("grants clients an 8 MiB stream and connection window by default, not Node's 64 KiB", async () => {
    const server = await startServer({ repository, services: ["http", "grpc"] });
    servers.push(server);
    expect(await grantedWindows(server.grpcAddress!)).toEqual({ stream: 8 * 1024 * 1024, connection: 8 * 1024 * 1024 });
  });

  it("grants the configured window", async () => {
    const server = await startServer({ repository, services: ["http", "grpc"], args: ["--grpc-flow-control-window", "1048576"] });
    servers.push(server);
    expect(await grantedWindows(server.grpcAddress!)).toEqual({ stream: 1_048_576, connection: 1_048_576 });
  });
});
