import type { ChildProcess } from "node:child_process";

/** What every bench child says besides its measurements: that it is ready, or why it failed. */
export type ChildStatusMessage = { readonly type: "ready" } | { readonly type: "failed"; readonly message: string };

/** How long a bench child measures: load it throws away, then the window it reports. */
export interface MeasurementWindow {
  readonly warmupMs: number;
  readonly durationMs: number;
}

/**
 * The next message of a bench child process (Node IPC), or its `failed` message as an error, or its exit as one.
 * Shared by the children the bench forks (the in-process ONNX Runtime baseline, the load processes).
 */
export function nextChildMessage<Message extends { readonly type: string }>(
  child: ChildProcess, name: string,
): Promise<Exclude<Message, { type: "failed" }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message): void => {
      cleanup();
      if (message.type === "failed") reject(new Error(`${name} failed: ${"message" in message ? String(message.message) : ""}`));
      else resolve(message as Exclude<Message, { type: "failed" }>);
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`${name} exited with code ${code}`));
    };
    const cleanup = (): void => {
      child.off("message", onMessage).off("exit", onExit);
    };
    child.on("message", onMessage).on("exit", onExit);
  });
}

/** Disconnects a bench child (it exits when its IPC channel closes) and waits for it to go. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.disconnect();
  await exited;
}
