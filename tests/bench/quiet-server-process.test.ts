import { describe, expect, it } from "vitest";
import { startQuietServerProcess } from "../../bench/quiet-server-process";
import { EXAMPLE_REPOSITORY } from "../helpers/server-process";

describe("startQuietServerProcess", () => {
  it("serves a server that writes no log line at all, from when it is ready until stopped", async () => {
    const server = await startQuietServerProcess(EXAMPLE_REPOSITORY, [
      "--model-control-mode", "explicit", "--load-model", "simple", "--log-info", "false", "--log-warning", "false", "--log-error", "false",
    ]);
    try {
      const ready = await fetch(`${server.httpUrl}/v2/models/simple/ready`);
      expect(ready.status).toBe(200);
    } finally {
      await server.stop();
    }
    await expect(fetch(`${server.httpUrl}/v2/health/live`)).rejects.toThrow();
  });

  it("rejects when the server exits before it is ready", async () => {
    await expect(startQuietServerProcess(EXAMPLE_REPOSITORY, ["--no-such-flag"])).rejects.toThrow(/exited with code/);
  });
});
