import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../server/metrics/free-port";
import { waitFor } from "./wait-for";

const PROMETHEUS_BIN = "/usr/bin/prometheus";

/** A real Prometheus (Debian's package, as CI installs it) on loopback, with its own temporary directory. */
export interface RunningPrometheus {
  readonly url: string;
  /** GET /api/v1/<endpoint>: its `data`, or a rejection with Prometheus' error. */
  api<T>(endpoint: string, params?: Readonly<Record<string, string>>): Promise<T>;
  /** SIGTERM (SIGKILL after 10 s), then removes its temporary directory. */
  stop(): Promise<void>;
}

/**
 * Starts Prometheus with `config` (written as JSON, which is YAML) on a free loopback port, and resolves once it
 * answers /-/ready. Rejects with its output if it exits or is not ready within 20 s, leaving nothing behind.
 */
export async function startPrometheus(config: object): Promise<RunningPrometheus> {
  if (!fs.existsSync(PROMETHEUS_BIN)) {
    throw new Error(`${PROMETHEUS_BIN} is missing: install Debian's prometheus package (apt-get install --no-install-recommends prometheus), as npm test's pretest does`);
  }
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "prometheus-"));
  const configFile = path.join(tempDir, "prometheus.yml");
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(PROMETHEUS_BIN, [
    `--config.file=${configFile}`, `--storage.tsdb.path=${path.join(tempDir, "data")}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { cwd: tempDir, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(kill);
    }
    fs.rmSync(tempDir, { recursive: true, force: true });
  };

  const exited = new Promise<never>((_, reject) => child.once("exit", (code, signal) => reject(new Error(`prometheus exited with ${code ?? signal}`))));
  try {
    await Promise.race([exited, waitFor("Prometheus to be ready", 20_000, async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined))]);
  } catch (error) {
    await stop();
    // Its output says why; read now, not when the wait began, when there was none yet.
    throw new Error(`${error instanceof Error ? error.message : String(error)}:\n${log}`, { cause: error });
  }

  return {
    url,
    async api<T>(endpoint: string, params: Readonly<Record<string, string>> = {}): Promise<T> {
      const response = await fetch(`${url}/api/v1/${endpoint}?${new URLSearchParams(params).toString()}`);
      const body = (await response.json()) as { status: string; data: T; error?: string };
      if (body.status !== "success") throw new Error(`${endpoint} ${JSON.stringify(params)}: ${body.error}`);
      return body.data;
    },
    stop,
  };
}
