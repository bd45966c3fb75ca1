import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IMAGE_INPUTS, imageContentTag } from "../../infra/global";

const REPOSITORY_ROOT = path.resolve(__dirname, "..", "..");
let root: string;

function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "image-tag-"));
  for (const file of ["package.json", "package-lock.json", ".npmrc", "tsconfig.json", "tsconfig.build.json", "server/main.ts", "server/Dockerfile.cuda"]) write(file, file);
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe("imageContentTag (issue 23, item 15: an unchanged server rolls nothing)", () => {
  it("is the same for the same inputs, whatever else changed in the repository", () => {
    const before = imageContentTag(root, "server/Dockerfile.cuda");
    expect(before).toMatch(/^src-[0-9a-f]{16}$/);
    write("infra/stack.ts", "changed");
    write("README.md", "changed");
    write("server/Dockerfile", "the CPU image's Dockerfile is not an input of the CUDA image");
    expect(imageContentTag(root, "server/Dockerfile.cuda")).toBe(before);
  });

  it("changes with any file that goes into the image: server code, the lockfile, the Dockerfile", () => {
    const tags = new Set([imageContentTag(root, "server/Dockerfile.cuda")]);
    for (const file of ["server/main.ts", "package-lock.json", "server/Dockerfile.cuda"]) {
      write(file, `${file} changed`);
      tags.add(imageContentTag(root, "server/Dockerfile.cuda"));
    }
    write("server/new-module.ts", "new");
    tags.add(imageContentTag(root, "server/Dockerfile.cuda"));
    expect(tags.size).toBe(5);
  });

  it("hashes exactly what the repository's .dockerignore admits into the build context", () => {
    const admitted = fs.readFileSync(path.join(REPOSITORY_ROOT, ".dockerignore"), "utf8").split("\n")
      .filter((line) => line.startsWith("!")).map((line) => line.slice(1).trim());
    expect([...IMAGE_INPUTS].sort()).toEqual(admitted.sort());
  });
});
