import { existsSync } from "node:fs";
import path from "node:path";

/** The worker script `<name>.js` beside the compiled module, or `<name>.ts` through tsx when running from sources. */
export function workerScript(directory: string, name: string): { file: string; execArgv: string[] } {
  const compiled = path.join(directory, `${name}.js`);
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  return { file: path.join(directory, `${name}.ts`), execArgv: ["--require", "tsx/cjs"] };
}
