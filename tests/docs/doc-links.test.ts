import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, docPages } from "./doc-pages";

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...text.matchAll(/^#{1,6} (.*)$/gm)].map((match) => slug(match[1]!)));
}

describe("links between the documentation pages", () => {
  it("lead to files that exist and to headings they have", () => {
    const broken: string[] = [];
    for (const page of docPages()) {
      const text = page.text.replace(/^```[\s\S]*?^```/gm, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file = "", anchor] = target!.split("#");
        const resolved = file === "" ? path.join(REPO_ROOT, page.file) : path.resolve(path.dirname(path.join(REPO_ROOT, page.file)), file);
        if (!fs.existsSync(resolved)) broken.push(`${page.file}: ${target} (no such file)`);
        else if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(`${page.file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
