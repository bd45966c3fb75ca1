import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./doc-pages";

/** Each flag `inference-server --help` lists, with its default when it prints one. */
function helpFlags(): Map<string, string | undefined> {
  const help = execFileSync(process.execPath, [path.join(REPO_ROOT, "dist/server/main.js"), "--help"], { encoding: "utf8" });
  const flags = new Map<string, string | undefined>();
  for (const line of help.split("\n")) {
    const flag = /^\s+(?:-\w, )?(--[\w-]+)/.exec(line)?.[1];
    if (flag && flag !== "--help") flags.set(flag, /\(default: ([^)]*)\)\s*$/.exec(line)?.[1]?.replace(/^.*default: /, ""));
  }
  return flags;
}

/** The rows of docs/server-flags.md's table: the flags its first cell names, and its default cell. */
function tableRows(): { flags: string[]; defaultCell: string }[] {
  const page = fs.readFileSync(path.join(REPO_ROOT, "docs/server-flags.md"), "utf8");
  return page
    .split("\n")
    .filter((line) => line.startsWith("| `--"))
    .map((line) => {
      const [first = "", defaultCell = ""] = line.split(" | ").map((cell) => cell.replace(/^\| /, ""));
      return { flags: [...first.matchAll(/`(--[\w-]+)/g)].map((match) => match[1]!), defaultCell };
    });
}

describe("docs/server-flags.md against inference-server --help", () => {
  const help = helpFlags();
  const rows = tableRows();
  const documented = new Set(rows.flatMap((row) => row.flags));

  it("documents every flag --help lists", () => {
    expect(help.size).toBeGreaterThan(50);
    expect([...help.keys()].filter((flag) => !documented.has(flag))).toEqual([]);
  });

  it("documents only flags --help lists", () => {
    expect([...documented].filter((flag) => !help.has(flag))).toEqual([]);
  });

  it("gives the default --help prints for every single-flag row with a numeric default", () => {
    const wrong = rows
      .filter((row) => row.flags.length === 1 && /^-?\d+$/.test(help.get(row.flags[0]!) ?? ""))
      .filter((row) => row.defaultCell.split(/[\s,]/)[0] !== help.get(row.flags[0]!))
      .map((row) => `${row.flags[0]}: table ${row.defaultCell}, --help ${help.get(row.flags[0]!)}`);
    expect(wrong).toEqual([]);
  });
});
