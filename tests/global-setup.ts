import { execFileSync } from "node:child_process";
import path from "node:path";

/**
 * Builds the server once per test run, so end-to-end suites start the real binary (`dist/server/main.js`), and
 * generates the example model repository (`models/`) when it is missing.
 */
export default function setup(): void {
  const root = path.resolve(__dirname, "..");
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "pipe" });
  } catch (error) {
    // Type errors are `npm run typecheck`'s to report; the emitted JavaScript is still usable for tests.
    const output = String((error as { stdout?: Buffer }).stdout ?? "");
    if (!output.includes("error TS")) throw error;
  }
  execFileSync(process.execPath, [path.join(root, "dist/tools/model-builder/ensure-example-repository.js")], { cwd: root, stdio: "pipe" });
}
