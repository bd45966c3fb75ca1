import fs from "node:fs";
import path from "node:path";

/** The repository root, which README.md and docs/ live in. */
export const REPO_ROOT = path.resolve(__dirname, "../..");

/** One documentation page: its path relative to the repository root and its text. */
export interface DocPage {
  readonly file: string;
  readonly text: string;
}

/** A fenced code block of a page. */
export interface FencedBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's first info word (`sh`, `ts`, `text`, ...); "" for a bare fence. */
  readonly lang: string;
  readonly code: string;
  /** The reason given by a `<!-- not-runnable: reason -->` comment on the line before the fence. */
  readonly notRunnable: string | undefined;
}

/** README.md and every docs/*.md, README first. */
export function docPages(): DocPage[] {
  const docs = fs.readdirSync(path.join(REPO_ROOT, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`);
  return ["README.md", ...docs].map((file) => ({ file, text: fs.readFileSync(path.join(REPO_ROOT, file), "utf8") }));
}

const NOT_RUNNABLE = /^<!--\s*not-runnable:(.*)-->\s*$/;

/** The fenced blocks of a page in document order (``` fences; blocks do not nest). */
export function fencedBlocks(page: DocPage): FencedBlock[] {
  const lines = page.text.split("\n");
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    if (end < 0) throw new Error(`${page.file}:${i + 1}: unclosed code fence`);
    const marker = NOT_RUNNABLE.exec((lines[i - 1] ?? "").trim());
    blocks.push({
      file: page.file,
      line: i + 1,
      lang: (open[1] ?? "").trim().split(/\s+/)[0] ?? "",
      code: lines.slice(i + 1, end).join("\n"),
      notRunnable: marker ? (marker[1] ?? "").trim() : undefined,
    });
    i = end;
  }
  return blocks;
}

/** Languages whose blocks are shell commands. */
export const SHELL_LANGS: ReadonlySet<string> = new Set(["sh", "bash", "shell", "console"]);
/** Languages whose blocks are TypeScript. */
export const TYPESCRIPT_LANGS: ReadonlySet<string> = new Set(["ts", "typescript"]);
