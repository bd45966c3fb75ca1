import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const REPO_ROOT = path.resolve(__dirname, "..", "..");
export const SHARED_DATA = path.resolve(REPO_ROOT, "..", "shared", "data");
export const EXAMPLE_REPOSITORY = path.join(REPO_ROOT, "models");
const SERVER_MAIN = path.join(REPO_ROOT, "dist", "server", "main.js");

export interface RunningServer {
  readonly httpUrl: string;
  /** When the HTTP endpoint is enabled. */
  readonly httpPort: number | undefined;
  /** host:port, when the gRPC endpoint is enabled. */
  readonly grpcAddress: string | undefined;
  readonly grpcPort: number | undefined;
  readonly metricsUrl: string | undefined;
  readonly process: ChildProcess;
  /** Everything the server printed so far. */
  logs(): string;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  /** Model repository; defaults to the generated example repository. */
  readonly repository?: string;
  /** Extra flags, e.g. `["--exit-on-error", "false"]`. */
  readonly args?: readonly string[];
  /** Services whose start to wait for (default http only). */
  readonly services?: readonly ("http" | "grpc" | "metrics")[];
  readonly timeoutMs?: number;
  /** Extra environment variables for the server process (e.g. `TMPDIR`). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts the real server binary on 127.0.0.1 with every port 0, and resolves once each wanted service has logged
 * its `{"service": ..., "port": ...}` start line. Rejects with the server's output if it exits or times out first.
 */
export function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const services = options.services ?? ["http"];
  const args = [
    SERVER_MAIN, "--model-repository", options.repository ?? EXAMPLE_REPOSITORY,
    "--http-address", "127.0.0.1", "--http-port", "0",
    "--grpc-address", "127.0.0.1", "--grpc-port", "0",
    "--metrics-address", "127.0.0.1", "--metrics-port", "0",
    ...(services.includes("grpc") ? [] : ["--allow-grpc", "false"]),
    ...(services.includes("metrics") ? [] : ["--allow-metrics", "false"]),
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  let output = "";
  const ports = new Map<string, number>();
  return new Promise<RunningServer>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start within ${options.timeoutMs ?? 60_000} ms:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      for (const line of chunk.toString().split("\n")) {
        const match = /"service":"(\w+)","port":(\d+)/.exec(line);
        if (match) ports.set(match[1]!, Number(match[2]));
      }
      if (services.every((s) => ports.has(s))) {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve({
          httpUrl: `http://127.0.0.1:${ports.get("http")}`,
          httpPort: ports.get("http"),
          grpcAddress: ports.has("grpc") ? `127.0.0.1:${ports.get("grpc")}` : undefined,
          grpcPort: ports.get("grpc"),
          metricsUrl: ports.has("metrics") ? `http://127.0.0.1:${ports.get("metrics")}` : undefined,
          process: child,
          logs: () => output,
          stop: () => stopProcess(child),
        });
      }
    };
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code} before starting:\n${output}`));
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", onExit);
  });
}

/** What a script run to completion printed, and how it exited. */
export interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr, interleaved as they came. */
  readonly output: string;
}

/** Runs `node <script> <args>` from the repository root to completion; rejects if it runs past `timeoutMs`. */
export function runScriptToExit(script: string, args: readonly string[], timeoutMs = 60_000): Promise<ScriptRun> {
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${path.basename(script)} did not exit within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, output });
    });
  });
}

/** Runs the server binary to completion (for flags like --help, or startup failures). */
export function runServerToExit(args: readonly string[], timeoutMs = 60_000): Promise<ScriptRun> {
  return runScriptToExit(SERVER_MAIN, args, timeoutMs);
}

function stopProcess(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}
