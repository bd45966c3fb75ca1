import { readFileSync } from "node:fs";

/** A process's resident set now (VmRSS) and at its peak so far (VmHWM), in bytes, from Linux's /proc. */
export function processMemory(pid: number): { rssBytes: number; peakBytes: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const bytes = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)![1]) * 1024;
  return { rssBytes: bytes("VmRSS"), peakBytes: bytes("VmHWM") };
}
