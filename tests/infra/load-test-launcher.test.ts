import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTestLauncher } from "../../infra/region/load-test";
import { parseStackConfig } from "../../infra/stack-config";

const loadTest = (protocol: "http" | "grpc") => parseStackConfig({ project: "my-project-1", loadTest: { enabled: true, protocol } }, { stack: "dev", namespace: "gpu-inference" }).loadTest;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "load-test-launcher-"));

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Runs the launcher with a stand-in for inference-perf that prints the argv it was started with and the argv it parses. */
function runLauncher(protocol: "http" | "grpc", env: Record<string, string>) {
  const entry = path.join(scratch, "main.js");
  fs.writeFileSync(entry, "console.log(JSON.stringify({ parsed: process.argv.slice(2), cmdline: require('fs').readFileSync('/proc/self/cmdline', 'utf8').split('\\0') }));\n");
  const launcher = path.join(scratch, `launch-${protocol}.js`);
  fs.writeFileSync(launcher, loadTestLauncher(loadTest(protocol)).replace("/app/dist/tools/perf/main.js", entry));
  return spawnSync(process.execPath, [launcher, "-m", "resnet50"], { env: { PATH: process.env["PATH"] ?? "", ...env }, encoding: "utf8" });
}

describe("the load test's launcher", () => {
  it("hands inference-perf the admin key as a header without putting it on any command line", () => {
    const run = runLauncher("http", { INFERENCE_ADMIN_KEY: "s3cret" });
    const { parsed, cmdline } = JSON.parse(run.stdout) as { parsed: string[]; cmdline: string[] };
    expect(parsed).toEqual(["-m", "resnet50", "-H", "admin-key:s3cret"]);
    expect(cmdline.join(" ")).not.toContain("s3cret");
  });

  it("uses Triton's gRPC metadata name over gRPC", () => {
    const run = runLauncher("grpc", { INFERENCE_ADMIN_KEY: "k" });
    expect((JSON.parse(run.stdout) as { parsed: string[] }).parsed).toEqual(["-m", "resnet50", "-H", "triton-grpc-protocol-admin-key:k"]);
  });

  it("refuses to start without the key", () => {
    const run = runLauncher("http", {});
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("INFERENCE_ADMIN_KEY is not set");
  });
});
