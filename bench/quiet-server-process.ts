import { spawn } from "node:child_process";
import { once } from "node:events";
import { get } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { findPackageRoot } from "../common/find-package-root";

const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 100;

/** A server child process started on an HTTP port the harness chose. */
export interface QuietServerProcess {
  readonly httpUrl: string;
  /** SIGTERM; resolves once it exited. */
  stop(): Promise<void>;
}

/** A port free now on 127.0.0.1 (the kernel's pick for port 0, released again). */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function isReady(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    get(url, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    }).once("error", () => resolve(false));
  });
}

/**
 * Starts the built server (`dist/server/main.js`, HTTP only on 127.0.0.1) on a port chosen here and resolves once
 * `/v2/health/ready` answers 200, so that it works with every log line off (`--log-info false` and so on), where
 * `startInferenceServerProcess` waits for the port in the start-up log line. Rejects if the server exits first or
 * is not ready within a minute.
 */
export async function startQuietServerProcess(modelRepository: string, args: readonly string[]): Promise<QuietServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [
    path.join(findPackageRoot(__dirname), "dist", "server", "main.js"), "--model-repository", modelRepository,
    "--allow-grpc", "false", "--allow-metrics", "false", "--http-address", "127.0.0.1", "--http-port", String(port), ...args,
  ], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = once(child, "exit");
  let gone = false;
  void exited.then(() => (gone = true));
  const httpUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await isReady(`${httpUrl}/v2/health/ready`))) {
    if (gone) throw new Error(`the server exited with code ${String(child.exitCode)} before it was ready`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the server was not ready within ${READY_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  return {
    httpUrl,
    async stop() {
      if (!gone) child.kill("SIGTERM");
      await exited;
    },
  };
}
