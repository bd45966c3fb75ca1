import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GRPC_TYPES_DIRECTORY, generateGrpcTypes } from "../../tools/generate-grpc-types";

function filesUnder(directory: string): Map<string, string> {
  const files = readdirSync(directory, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Map(files.map((entry) => {
    const file = path.join(entry.parentPath, entry.name);
    return [path.relative(directory, file), readFileSync(file, "utf8")];
  }));
}

describe("protocol/grpc-types", () => {
  const fresh = mkdtempSync(path.join(tmpdir(), "grpc-types-"));
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it("is what `npm run grpc-types` generates from protocol/proto now", () => {
    generateGrpcTypes(fresh);
    const generated = filesUnder(fresh);
    const committed = filesUnder(GRPC_TYPES_DIRECTORY);
    expect(generated.size).toBeGreaterThan(0);
    // Names first, so that an added or removed message reads as such rather than as a wall of text.
    expect([...committed.keys()].sort()).toEqual([...generated.keys()].sort());
    for (const [file, text] of generated) expect(committed.get(file), `${file} is stale: run npm run grpc-types`).toBe(text);
  }, 60_000);
});
