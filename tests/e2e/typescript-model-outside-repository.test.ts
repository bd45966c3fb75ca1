import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fencedBlocks } from "../docs/doc-pages";
import { REPO_ROOT } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";

const PAGE_FILE = "docs/typescript-models.md";
const BLOCKS = fencedBlocks({ file: PAGE_FILE, text: readFileSync(path.join(REPO_ROOT, PAGE_FILE), "utf8") });

function block(predicate: (code: string, lang: string) => boolean): string {
  const found = BLOCKS.find((b) => predicate(b.code, b.lang));
  if (found === undefined) throw new Error(`${PAGE_FILE} has no such block`);
  return found.code;
}

const parent = mkdtempSync(path.join(os.tmpdir(), "own-models-"));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** Runs shell lines as a user would, in `cwd`; packages come from npm's cache when it has them. */
function sh(script: string, cwd: string): string {
  return execFileSync("bash", ["-euo", "pipefail", "-c", script], {
    cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" },
  });
}

describe("a TypeScript model in a folder of its own, outside the clone (docs/typescript-models.md)", () => {
  it("installs, builds with the documented tsconfig and line, and is served", async () => {
    // The documented install, with the clone's path for /path/to/gcp-inference-stack.
    const install = block((code) => code.includes("npm install --save-dev typescript @types/node"));
    sh(install.replaceAll("/path/to/gcp-inference-stack", REPO_ROOT), parent);
    const folder = path.join(parent, "my-models");
    writeFileSync(path.join(folder, "tsconfig.json"), block((code, lang) => lang === "json" && code.includes("models/*/*/model.ts")));
    mkdirSync(path.join(folder, "models", "scale", "1"), { recursive: true });
    writeFileSync(path.join(folder, "models", "scale", "1", "model.ts"), block((code) => code.startsWith("// models/scale/model.ts")));
    writeFileSync(path.join(folder, "models", "scale", "config.pbtxt"), block((code) => code.startsWith("# models/scale/config.pbtxt")));
    const [build, serve] = block((code) => code.startsWith("npx tsc\n")).split("\n");
    sh(build!, folder);

    const server = spawn("bash", ["-c", `exec ${serve!} --http-address 127.0.0.1 --http-port 0 --allow-grpc false --allow-metrics false`], {
      cwd: folder, stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    server.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    let serverPid: number | undefined;
    try {
      const started = await waitFor(`the server in ${folder}`, 90_000, async () => {
        const line = /"pid":(\d+)[^\n]*"service":"http","port":(\d+)/.exec(output);
        return line ? { pid: Number(line[1]), port: Number(line[2]) } : undefined;
      });
      serverPid = started.pid;
      const response = await fetch(`http://127.0.0.1:${started.port}/v2/models/scale/infer`, {
        method: "POST", body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 2], data: [1, 2] }] }),
      });
      // factor 3 from config.pbtxt's parameters.
      expect(await response.json()).toMatchObject({ outputs: [{ name: "OUTPUT0", data: [3, 6] }] });
    } finally {
      server.kill("SIGTERM");
      if (serverPid !== undefined) {
        try {
          process.kill(serverPid, "SIGTERM");
        } catch {
          // already gone with npx
        }
      }
    }
  }, 240_000);
});
