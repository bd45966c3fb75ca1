// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "models/**", "node_modules/**", "bench/results/**", "bench/grpc-transports/generated/**", "protocol/grpc-types/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", __dirname: "readonly", require: "readonly", module: "writable" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      // Commander only through its typed re-export, which infers each option's type from its declaration, so that
      // no command line goes back to reading opts() as an untyped record with casts. (typescript-eslint's rule,
      // not ESLint's no-restricted-imports, which the layer rules below set per folder and would override.)
      "@typescript-eslint/no-restricted-imports": ["error", { paths: [{
        name: "commander", message: "Import @commander-js/extra-typings: the same commander, with the options' types inferred.",
      }] }],
    },
  },
  // The data-flow arrows of docs/architecture.md: frontends and metrics see only core's facade; core
  // never sees a frontend, a concrete backend or prom-client; backends never see HTTP or the core.
  {
    files: ["server/frontends/**/*.ts", "server/metrics/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/core/*", "!**/core/index"], message: "Import the core only through server/core/index.ts." },
        { group: ["**/backends/**", "onnxruntime-node"], message: "Frontends and metrics never touch a backend." },
      ] }],
    },
  },
  // Tracing is a side channel like metrics: it implements the core's trace interface and sees only the facade.
  {
    files: ["server/tracing/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/core/*", "!**/core/index"], message: "Tracing imports the core only through server/core/index.ts." },
        { group: ["**/frontends/**", "**/backends/**", "**/metrics/**"], message: "Tracing never sees a frontend, a backend or metrics." },
      ] }],
    },
  },
  {
    files: ["server/core/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/frontends/**", "**/metrics/**", "**/tracing/**", "prom-client", "fastify", "@grpc/*", "onnxruntime-node", "**/backends/onnxruntime/**"], message: "Core never imports a frontend, metrics, tracing or a concrete backend." },
      ] }],
    },
  },
  {
    files: ["server/backends/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/core/**", "**/frontends/**", "fastify", "@grpc/*"], message: "Backends never see the core or HTTP." },
      ] }],
    },
  },
  {
    files: ["infra/region/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["**/global/**"], message: "Region code never imports global code." }] }] },
  },
);
