import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { freePort } from "../server/metrics/free-port";
import { type DocPage, type FencedBlock, REPO_ROOT, SHELL_LANGS, TYPESCRIPT_LANGS, docPages, fencedBlocks } from "./doc-pages";
import { createDocSandbox } from "./doc-sandbox";
import { docShellPrelude } from "./doc-shell-prelude";
import { ShellSession } from "./shell-session";

const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; bin: Record<string, string> };
const PAGES = docPages();
const BLOCKS = PAGES.flatMap(fencedBlocks);
const where = (block: FencedBlock): string => `${block.file}:${block.line}`;

/** A block whose first line is a comment naming a relative path (`// models/scale/model.ts`) is that file. */
function namedFile(block: FencedBlock): string | undefined {
  const first = block.code.split("\n")[0] ?? "";
  return /^(?:\/\/|#)\s*([\w.-]+\/[\w./-]+\.\w+)\s*$/.exec(first)?.[1];
}

/** What a shell block says it prints: each ` # -> text` comment, in order. */
function documentedOutputs(code: string): string[] {
  return code.split("\n").flatMap((line) => {
    const match = /(?:^|\s)# -> (.*)$/.exec(line);
    return match?.[1] ? [match[1].trim()] : [];
  });
}

const TALKS_TO_SERVER = /\b(?:localhost|127\.0\.0\.1):800[0-2]\b/;
const STARTS_SERVER = /(?:^|[\s;&|])npx inference-server\b/m;

describe("documentation code blocks", () => {
  it("name their language, and a block marked not runnable gives the reason", () => {
    expect(BLOCKS.filter((block) => block.lang === "").map(where)).toEqual([]);
    expect(BLOCKS.filter((block) => block.notRunnable !== undefined && block.notRunnable.length < 10).map(where)).toEqual([]);
  });

  it("name only npm scripts and npx commands that exist", () => {
    const installed = (name: string): boolean => name in PACKAGE.bin || fs.existsSync(path.join(REPO_ROOT, "node_modules", ".bin", name));
    const missing: string[] = [];
    for (const page of PAGES) {
      for (const [, script] of page.text.matchAll(/\bnpm run ([\w:-]+)/g)) if (!(script! in PACKAGE.scripts)) missing.push(`${page.file}: npm run ${script}`);
      for (const [, script] of page.text.matchAll(/\bnpm (start|test)\b/g)) if (!(script! in PACKAGE.scripts)) missing.push(`${page.file}: npm ${script}`);
      for (const [, command] of page.text.matchAll(/\bnpx ([\w@./-]+)/g)) if (!installed(command!)) missing.push(`${page.file}: npx ${command}`);
    }
    expect(missing).toEqual([]);
  });
});

/** The pages with shell blocks to run. */
const RUN_PAGES = PAGES.filter((page) => fencedBlocks(page).some((block) => SHELL_LANGS.has(block.lang) && block.notRunnable === undefined));

/**
 * Runs a page's blocks in document order in one shell session, in a sandbox of its own with loopback ports of its
 * own: shell blocks must succeed and print their ` # -> ` lines; a block that names its file is written there.
 */
async function runPage(page: DocPage): Promise<void> {
  const sandbox = createDocSandbox();
  const ports = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
  const session = new ShellSession(sandbox.root, { ...process.env, NO_COLOR: "1" }, docShellPrelude(ports, path.join(REPO_ROOT, PACKAGE.bin["inference-server"]!)));
  try {
    let serverStarted = false;
    for (const block of fencedBlocks(page)) {
      if (block.notRunnable !== undefined) continue;
      const file = namedFile(block);
      if (!SHELL_LANGS.has(block.lang)) {
        if (file) {
          fs.mkdirSync(path.dirname(path.join(sandbox.root, file)), { recursive: true });
          fs.writeFileSync(path.join(sandbox.root, file), `${block.code}\n`);
        }
        continue;
      }
      if (!serverStarted && !STARTS_SERVER.test(block.code) && TALKS_TO_SERVER.test(block.code)) {
        // Blocks that talk to a server before the page starts one run against `npm start`'s server.
        const started = await session.run(PACKAGE.scripts.start!.replace(/^node dist\/server\/main\.js/, "npx inference-server"), 120_000);
        expect(started.ok, `npm start's server: ${started.stderr}`).toBe(true);
        serverStarted = true;
      }
      serverStarted ||= STARTS_SERVER.test(block.code);
      const result = await session.run(block.code, 120_000);
      expect(result.ok, `${where(block)} failed:\n${result.stdout}\n${result.stderr}`).toBe(true);
      let from = 0;
      for (const expected of documentedOutputs(block.code)) {
        const at = result.stdout.indexOf(expected, from);
        expect(at, `${where(block)} should print ${expected} (after what it printed before); it printed:\n${result.stdout}`).toBeGreaterThanOrEqual(0);
        from = at + expected.length;
      }
    }
  } finally {
    await session.close();
    sandbox.remove();
  }
}

// Pages run side by side: most of their time is servers loading models.
describe.concurrent("the shell blocks of each page", () => {
  it.each(RUN_PAGES.map((page): [string, DocPage] => [page.file, page]))("%s run as written and print what they say", (_, page) => runPage(page), 240_000);
});

describe("the TypeScript blocks", () => {
  it("type-check against the repository (the package's published names resolve to its sources)", () => {
    const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (!config) throw new Error("tsconfig.json does not parse");
    const options: ts.CompilerOptions = {
      ...config.options,
      noEmit: true,
      paths: { ...config.options.paths, "gcp-inference-stack": ["./client/index.ts"] },
    };
    const snippets = new Map<string, FencedBlock>();
    for (const block of BLOCKS) {
      if (!TYPESCRIPT_LANGS.has(block.lang) || block.notRunnable !== undefined) continue;
      // .mts: the snippets are ES modules with top-level await, as a reader's script would be.
      snippets.set(path.join(REPO_ROOT, "docs", `snippet-${block.file.replace(/\W/g, "-")}-${block.line}.mts`), block);
    }
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (file, language, ...rest) => {
      const block = snippets.get(path.resolve(file));
      return block ? ts.createSourceFile(file, block.code, language) : getSourceFile(file, language, ...rest);
    };
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (file) => snippets.has(path.resolve(file)) || fileExists(file);
    const program = ts.createProgram([...snippets.keys()], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const block = diagnostic.file && snippets.get(path.resolve(diagnostic.file.fileName));
      const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
      const at = block ? `${block.file}:${block.line + line}` : (diagnostic.file?.fileName ?? "");
      return `${at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    });
    expect(snippets.size).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  }, 60_000);
});
