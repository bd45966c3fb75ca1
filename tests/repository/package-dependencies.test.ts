import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process";

const PACKAGE = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>; devDependencies: Record<string, string>;
};
const DOCKERFILES = ["server/Dockerfile", "server/Dockerfile.cuda"];

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => path.join(folder, file));
}

/** The packages a source file names in an import, export ... from, import() or require.resolve/require. */
function importedPackages(file: string): Set<string> {
  const text = readFileSync(path.join(REPO_ROOT, file), "utf8");
  const names = new Set<string>();
  for (const [, specifier] of text.matchAll(/(?:from\s+|import\(\s*|require(?:\.resolve)?\(\s*)"([^".][^"]*)"/g)) {
    const parts = specifier!.split("/");
    names.add(specifier!.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
  }
  return names;
}

/**
 * The packages `files` import, with the peer dependencies of those (a peer is the importer's to install:
 * `@commander-js/extra-typings` runs the `commander` beside it).
 */
function packagesUsedBy(files: readonly string[]): Set<string> {
  const used = new Set(files.flatMap((file) => [...importedPackages(file)]));
  for (const name of [...used]) {
    const manifest = path.join(REPO_ROOT, "node_modules", name, "package.json");
    if (!existsSync(manifest)) continue;
    const { peerDependencies = {} } = JSON.parse(readFileSync(manifest, "utf8")) as { peerDependencies?: Record<string, string> };
    for (const peer of Object.keys(peerDependencies)) used.add(peer);
  }
  return used;
}

/** What the server process loads: its own code, the client and shared code, and the TypeScript models it runs. */
const SERVER_SIDE = ["server", "client", "common", "protocol", "tools/model-builder"].flatMap(sourceFiles);
const EVERYTHING = [...SERVER_SIDE, ...["tools", "bench"].flatMap(sourceFiles)];

/** The packages each server image removes after `npm prune --omit=dev`: `npm uninstall --no-save ... <names>`. */
function imageRemovals(dockerfile: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, dockerfile), "utf8");
  const line = /npm uninstall --no-save[^\n]*/.exec(text)?.[0] ?? "";
  return line.split(/\s+/).slice(2).filter((word) => !word.startsWith("-") && word !== "\\");
}

describe("package.json's dependencies", () => {
  it("are each used by the package's code (the server, the client, the tools or the bench)", () => {
    const used = packagesUsedBy(EVERYTHING);
    expect(Object.keys(PACKAGE.dependencies).filter((name) => !used.has(name))).toEqual([]);
  });

  it("pin @grpc/grpc-js exactly: the gRPC endpoint reaches into its private internals", () => {
    const installed = (JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules/@grpc/grpc-js/package.json"), "utf8")) as { version: string }).version;
    expect(PACKAGE.dependencies["@grpc/grpc-js"]).toBe(installed);
  });
});

describe.each(DOCKERFILES)("%s", (dockerfile) => {
  it("keeps only what the server runs: it removes the dependencies only the tools and the bench use", () => {
    const serverUses = packagesUsedBy(SERVER_SIDE);
    const toolsOnly = Object.keys(PACKAGE.dependencies).filter((name) => !serverUses.has(name)).sort();
    expect(toolsOnly.length).toBeGreaterThan(0);
    expect(imageRemovals(dockerfile).sort()).toEqual(toolsOnly);
  });
});
