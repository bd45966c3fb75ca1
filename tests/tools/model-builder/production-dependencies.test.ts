import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../helpers/server-process";

/**
 * `npm run test:gpu` runs where only production dependencies are installed (the GPU machine's bundle, the image):
 * its gpu-check imports the model builder, which must not need `typescript` (a devDependency) to load. Checked in a
 * Node process in which `typescript` cannot be resolved, against the compiled builder as gpu-check loads it.
 */
const WITHOUT_TYPESCRIPT = `
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "typescript") throw Object.assign(new Error("Cannot find module 'typescript'"), { code: "MODULE_NOT_FOUND" });
  return resolve.call(this, request, ...rest);
};
`;

describe("the model builder with production dependencies only", () => {
  it("loads without typescript", () => {
    const script = `${WITHOUT_TYPESCRIPT}
const builder = require(${JSON.stringify(path.join(REPO_ROOT, "dist", "tools", "model-builder", "index.js"))});
process.stdout.write(typeof builder.buildExampleRepository);`;
    expect(execFileSync(process.execPath, ["-e", script], { cwd: REPO_ROOT, encoding: "utf8" })).toBe("function");
  });
});
