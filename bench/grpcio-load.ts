import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { DEBIAN_PYTHON } from "../common/debian-python";
import { findPackageRoot } from "../common/find-package-root";
import type { LoadChild } from "./load-processes";
import { LoadProcesses } from "./load-processes";
import type { LoadProcessMessage } from "./load-process-protocol";

const SCRIPT = path.join(findPackageRoot(__dirname), "bench", "grpcio-load-process.py");

/** Why no grpcio load can run here, or undefined when it can. */
export function grpcioMissing(): string | undefined {
  try {
    execFileSync(DEBIAN_PYTHON, ["-c", "import grpc"], { stdio: "ignore", timeout: 30_000 });
    return undefined;
  } catch {
    return `${DEBIAN_PYTHON} cannot import grpc (apt-get install python3-grpcio)`;
  }
}

/** bench/grpcio-load-process.py, spoken to in JSON lines over its stdin and stdout. */
function grpcioLoadChild(address: string, requestFile: string): LoadChild {
  const child = spawn(DEBIAN_PYTHON, [SCRIPT, address, requestFile], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  // "close", not "exit": by then its output has been read to the end, so its last line (a failure's) comes first.
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve).once("error", () => resolve(null)));
  return {
    next: async () => {
      const line = await Promise.race([lines.next(), exited.then((code) => ({ done: true as const, value: `exited with code ${code}` }))]);
      if (line.done === true) throw new Error(`the grpcio load process ${line.value ?? "closed its output"}`);
      const message = JSON.parse(line.value) as LoadProcessMessage;
      if (message.type === "failed") throw new Error(`the grpcio load process failed: ${message.message}`);
      return message;
    },
    send: (request) => child.stdin.write(`${JSON.stringify(request)}\n`),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      // It exits once its input closes; one stuck in a window it cannot finish is killed.
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * `count` load processes on gRPC's C core, each sending the serialized ModelInferRequest in `requestFile` to
 * `address` (host:port) as Triton's Python and C++ clients and perf_analyzer would.
 */
export function startGrpcioLoad(address: string, requestFile: string, count: number): Promise<LoadProcesses> {
  return LoadProcesses.of(Array.from({ length: count }, () => grpcioLoadChild(address, requestFile)));
}
