import fs from "node:fs";
import path from "node:path";
import type * as TypeScript from "typescript";

/**
 * `typescript` is a devDependency: loaded on first use, not at import, so that programs importing the model builder
 * (`npm run test:gpu`'s gpu-check) run where only production dependencies are installed.
 */
function loadTypeScript(): typeof TypeScript {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("typescript") as typeof TypeScript;
}

/** Whether TypeScript models can be compiled here (the `typescript` package is installed). */
export function typeScriptCompilerInstalled(): boolean {
  try {
    require.resolve("typescript");
    return true;
  } catch {
    return false;
  }
}

/**
 * The compiler options a TypeScript model is built with: CommonJS for Node's require() (the backend loads
 * model.js with it), ES2022 as the server's own code. `tsc --module commonjs --target es2022 --esModuleInterop
 * model.ts` gives the same file.
 */
function modelCompilerOptions(ts: typeof TypeScript): TypeScript.CompilerOptions {
  return { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, strict: true };
}

/**
 * Compiles one model source file to the JavaScript of its `model.js`. Types are erased, not checked (the sources
 * in this repository are checked by `npm run typecheck`); a syntax error throws with its position.
 */
export function compileTypeScriptModel(sourceFile: string): string {
  const ts = loadTypeScript();
  const source = fs.readFileSync(sourceFile, "utf8");
  const output = ts.transpileModule(source, { compilerOptions: modelCompilerOptions(ts), fileName: path.basename(sourceFile), reportDiagnostics: true });
  const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const described = errors.map((d) => {
      const where = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      return `${sourceFile}${where !== undefined ? `:${where.line + 1}:${where.character + 1}` : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    throw new Error(`cannot compile TypeScript model:\n${described.join("\n")}`);
  }
  return `// Compiled from ${path.basename(sourceFile)} by the example repository builder; edit the source, not this file.\n${output.outputText}`;
}
