import { spawn } from "node:child_process";
import { once } from "node:events";
import { workerScript } from "../../common/worker-script";
import type { StressServer } from "./stress-server";

/**
 * Health answers' latencies, polled every 10 ms on a connection of its own from a process of its own (which starts
 * before `send` is called) until what `send` returns settles.
 */
export async function healthDuring<T>(server: StressServer, send: () => Promise<T>): Promise<{ result: T; healthMs: number[] }> {
  const script = workerScript(__dirname, "health-poller-process");
  const poller = spawn(process.execPath, [...script.execArgv, script.file, server.httpUrl], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  const exited = once(poller, "exit");
  const ready = new Promise<void>((resolve) => {
    poller.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.startsWith("ready\n")) resolve();
    });
  });
  await Promise.race([ready, exited]);
  let result: T;
  try {
    result = await send();
  } finally {
    poller.kill("SIGTERM");
    await exited;
  }
  const [first, latencies] = output.split("\n");
  if (first !== "ready" || latencies === undefined) throw new Error(`the health poller failed: ${output.slice(0, 300)}`);
  return { result, healthMs: JSON.parse(latencies) as number[] };
}
