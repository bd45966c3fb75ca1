import { readFileSync } from "node:fs";

/** Linux's USER_HZ, the unit of CPU times in /proc: 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * CPU time, in ms, that a process's main thread has used (user + system, from /proc/<pid>/task/<pid>/stat). For
 * the server that thread is the event loop, where all protocol work happens; ONNX Runtime and V8's helpers run on
 * threads of their own. Measured per request it is steady where throughput on a shared machine is not. Linux only.
 */
export function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  // Field 2, the command name, may hold spaces and parentheses: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`/proc/${pid}/task/${pid}/stat has no CPU times`);
  return (ticks * 1000) / TICKS_PER_SECOND;
}
