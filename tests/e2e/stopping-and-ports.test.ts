import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runServerToExit } from "../helpers/server-process";
import { writeProbeModel } from "../helpers/typescript-test-models";
import { waitFor } from "../helpers/wait-for";

const repository = mkdtempSync(path.join(os.tmpdir(), "stopping-"));
writeProbeModel(repository, { name: "probe" });
afterAll(() => rmSync(repository, { recursive: true, force: true }));

const LOCAL_PORTS = [
  "--http-address", "127.0.0.1", "--grpc-address", "127.0.0.1", "--metrics-address", "127.0.0.1",
  "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0",
];

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once nothing listens on 127.0.0.1:port (a listener of ours can take it), and frees it again. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

describe("the command a user started, stopped by its PID", () => {
  // `npm start --ignore-scripts` runs the start script without prestart's build (global setup built dist/); the
  // later --model-repository wins over the script's own.
  it.each([
    ["npm start", "npm", ["start", "--ignore-scripts", "--"]],
    ["npx inference-server", "npx", ["--no-install", "inference-server"]],
  ])("SIGTERM to %s stops the server, drained, and frees its port", async (_name, command, prefix) => {
    const launcher = spawn(command, [...prefix, "--model-repository", repository, ...LOCAL_PORTS], {
      cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    launcher.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    launcher.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // The server inherits the pipes: they end when the server itself has exited, not when npm has.
    const pipesClosed = new Promise<void>((resolve) => launcher.stdout.once("close", () => resolve()));
    let serverPid: number | undefined;
    try {
      const started = await waitFor("the server's HTTP endpoint", 90_000, async () => {
        const line = /"pid":(\d+)[^\n]*"service":"http","port":(\d+)/.exec(output);
        return line ? { pid: Number(line[1]), port: Number(line[2]) } : undefined;
      });
      serverPid = started.pid;
      expect(serverPid).not.toBe(launcher.pid);
      launcher.kill("SIGTERM");
      await waitFor("the server to exit", 30_000, async () => (processAlive(started.pid) ? undefined : true));
      await pipesClosed;
      expect(output).toMatch(/draining for up to 30 s/);
      expect(await portFree(started.port)).toBe(true);
    } finally {
      launcher.kill("SIGKILL");
      if (serverPid !== undefined && processAlive(serverPid)) process.kill(serverPid, "SIGKILL");
    }
  }, 150_000);
});

describe("an endpoint's port already in use", () => {
  it.each(["http", "grpc", "metrics"] as const)("--%s-port in use: one line naming the flag and port, exit status 3", async (service) => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const run = await runServerToExit(["--model-repository", repository, ...LOCAL_PORTS, `--${service}-port`, String(port)]);
      expect(run.code).toBe(3);
      expect(run.stderr.trim()).toBe(`inference-server: --${service}-port ${port}: address already in use`);
      expect(run.output).not.toMatch(/\n\s+at /);
    } finally {
      holder.close();
    }
  });
});
