import { type ChildProcess, spawn } from "node:child_process";

/** A child process serving on the ports it announced on its output. */
export interface ServiceProcess {
  /** Port per name of the pattern that found it. */
  readonly ports: Readonly<Record<string, number>>;
  readonly pid: number | undefined;
  /** Everything it printed so far. */
  logs(): string;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves when the process exits, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A service that exited or timed out before it announced its ports; `output` is everything it printed. */
export class ServiceStartError extends Error {
  constructor(reason: string, readonly output: string) {
    super(`${reason}:\n${output}`);
  }
}

/**
 * Starts `node <args>` and resolves once its output matched every pattern in `portPatterns` (the first capture
 * group is the port). Rejects with a {@link ServiceStartError} if it exits or has not announced them all within
 * `timeoutMs`; the child is killed then.
 */
export function startServiceProcess(
  args: readonly string[], portPatterns: Readonly<Record<string, RegExp>>, timeoutMs: number, cwd: string,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })));
  let output = "";
  let ready = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new ServiceStartError(`${args[0]} did not start within ${timeoutMs} ms`, output));
    }, timeoutMs);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new ServiceStartError(`${args[0]} exited with code ${code} before it was ready`, output));
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready) return;
      const ports = Object.entries(portPatterns).map(([name, pattern]) => [name, pattern.exec(output)?.[1]] as const);
      if (ports.some(([, port]) => port === undefined)) return;
      ready = true;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve({
        ports: Object.fromEntries(ports.map(([name, port]) => [name, Number(port)])), pid: child.pid, logs: () => output,
        stop: (graceMs = 10_000) => stopChild(child, graceMs), exited,
      });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", onExit);
  });
}

function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
