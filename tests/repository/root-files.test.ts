import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process";

/**
 * What may sit at the repository's root: the folders of docs/architecture.md's map and the project's own config.
 * A profiler log, a report or a scratch file left there by a run fails here instead of landing.
 */
const ROOT_ENTRIES = new Set([
  ".ci", ".dependency-cruiser.cjs", ".dockerignore", ".github", ".gitignore", "Pulumi.dev.yaml", "Pulumi.prod.yaml", "Pulumi.yaml",
  "README.md", "bench", "client", "common", "dashboards", "docs", "eslint.config.mjs", "infra", "package-lock.json", "package.json",
  "protocol", "server", "tests", "tools", "tsconfig.build.json", "tsconfig.json", "vitest.config.mts",
]);

function gitLines(...args: string[]): string[] {
  return execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8" }).split("\n").filter((line) => line !== "");
}

describe("the repository's root", () => {
  it("tracks only the entries of the architecture's map", () => {
    const tracked = new Set(gitLines("ls-files").map((file) => file.split("/")[0]!));
    expect([...tracked].filter((entry) => !ROOT_ENTRIES.has(entry))).toEqual([]);
  });

  it("has no untracked file that .gitignore does not name (stray artifacts of a run)", () => {
    const untrackedAtRoot = gitLines("ls-files", "--others", "--exclude-standard", "--directory")
      .map((path) => path.replace(/\/$/, ""))
      .filter((path) => !path.includes("/"));
    expect(untrackedAtRoot.filter((entry) => !ROOT_ENTRIES.has(entry))).toEqual([]);
  });
});
