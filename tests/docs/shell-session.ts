import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** What one block printed, and whether every command in it succeeded. */
export interface BlockResult {
  readonly stdout: string;
  readonly stderr: string;
  /** False when a command of the block exited non-zero (the session's ERR trap saw it) or the block timed out. */
  readonly ok: boolean;
}

/**
 * One bash process that runs a page's shell blocks one after another, as a reader would type them into one
 * terminal: variables exported by one block are seen by the next, and a server started in the background keeps
 * running for the blocks after it. The process gets its own process group, so close() ends what it started.
 */
export class ShellSession {
  readonly #bash: ChildProcessWithoutNullStreams;
  #stdout = "";
  #stderr = "";
  #blocks = 0;

  constructor(
    private readonly cwd: string,
    env: NodeJS.ProcessEnv,
    prelude: string,
  ) {
    this.#bash = spawn("bash", ["--noprofile", "--norc"], { cwd, env, detached: true, stdio: "pipe" });
    this.#bash.stdout.setEncoding("utf8").on("data", (chunk: string) => (this.#stdout += chunk));
    this.#bash.stderr.setEncoding("utf8").on("data", (chunk: string) => (this.#stderr += chunk));
    fs.writeFileSync(path.join(cwd, ".doc-session-prelude.sh"), prelude);
    this.#bash.stdin.write("source .doc-session-prelude.sh\n");
  }

  /** Runs a block with `source` (so its exports stay) and resolves once it ends, or after `timeoutMs`. */
  async run(script: string, timeoutMs: number): Promise<BlockResult> {
    const index = ++this.#blocks;
    const file = path.join(this.cwd, `.doc-block-${index}.sh`);
    fs.writeFileSync(file, `${script}\n`);
    const done = `__doc_block_${index}_done__`;
    this.#stdout = "";
    this.#stderr = "";
    this.#bash.stdin.write(`__doc_failed=0; source ${JSON.stringify(file)}; printf '\\n${done} %s\\n' "$__doc_failed"\n`);
    const deadline = Date.now() + timeoutMs;
    while (!this.#stdout.includes(done)) {
      if (Date.now() > deadline || this.#bash.exitCode !== null) {
        return { stdout: this.#stdout, stderr: `${this.#stderr}\n(block timed out after ${timeoutMs} ms or the shell ended)`, ok: false };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const at = this.#stdout.indexOf(done);
    const failed = this.#stdout.slice(at + done.length).trim().startsWith("1");
    return { stdout: this.#stdout.slice(0, at), stderr: this.#stderr, ok: !failed };
  }

  /** Stops the shell and every process it started (servers in the background included), and waits for the shell. */
  async close(): Promise<void> {
    const pid = this.#bash.pid;
    if (pid === undefined || this.#bash.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#bash.once("exit", resolve));
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      return; // The group is already gone.
    }
    await exited;
  }
}
