import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { mainThreadCpuMs } from "../../../tools/perf/thread-cpu";

describe("mainThreadCpuMs", () => {
  it("counts what a process's main thread computes, not the time it sleeps", async () => {
    // A child that spins on its main thread until it has used 400 ms of CPU (not of wall time, which a loaded or
    // slow machine stretches), then sleeps: its CPU time stops growing when it sleeps.
    const spin = "const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; while (cpuMs() < 400);";
    const child = spawn(process.execPath, ["-e", `${spin} process.stdout.write('spun\\n'); setTimeout(() => undefined, 30_000);`]);
    try {
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      const afterSpin = mainThreadCpuMs(child.pid!);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const afterSleep = mainThreadCpuMs(child.pid!);
      expect(afterSpin).toBeGreaterThanOrEqual(300);
      expect(afterSleep - afterSpin).toBeLessThanOrEqual(30);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("fails with the file it could not read for a process that does not exist", () => {
    expect(() => mainThreadCpuMs(2 ** 22 + 1)).toThrow(/\/proc\/4194305\/task\/4194305\/stat/);
  });
});
