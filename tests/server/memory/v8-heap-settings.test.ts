import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseServerOptions } from "../../../server/cli/server-options";
import { applyV8HeapSettings, v8HeapFlags } from "../../../server/memory/v8-heap-settings";

const REPO = ["--model-repository", "/models"];

describe("the server's V8 heap settings", () => {
  it("turns allocation-site pretenuring off by default and on with --allocation-site-pretenuring", () => {
    expect(v8HeapFlags(parseServerOptions(REPO))).toEqual(["--heap-growing-percent=300", "--no-allocation-site-pretenuring"]);
    expect(v8HeapFlags(parseServerOptions([...REPO, "--allocation-site-pretenuring"]))).toContain("--allocation-site-pretenuring");
    expect(v8HeapFlags(parseServerOptions([...REPO, "--allocation-site-pretenuring", "false", "--heap-growing-percent", "0"])))
      .toEqual(["--heap-growing-percent=0", "--no-allocation-site-pretenuring"]);
  });

  it("hands V8 every flag", () => {
    const set: string[] = [];
    applyV8HeapSettings({ heapGrowingPercent: 150, allocationSitePretenuring: true }, (flag) => set.push(flag));
    expect(set).toEqual(["--heap-growing-percent=150", "--allocation-site-pretenuring"]);
  });

  it("sets flags this Node's V8 knows (setFlagsFromString ignores unknown ones without a word)", () => {
    const exitCode = (flags: readonly string[]): number | null => spawnSync(process.execPath, [...flags, "-e", "0"]).status;
    expect(exitCode(v8HeapFlags({ heapGrowingPercent: 300, allocationSitePretenuring: false }))).toBe(0);
    expect(exitCode(v8HeapFlags({ heapGrowingPercent: 300, allocationSitePretenuring: true }))).toBe(0);
    expect(exitCode(["--no-allocation-site-pretenurin"])).not.toBe(0);
  });
});
