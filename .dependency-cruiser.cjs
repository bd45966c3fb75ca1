// The import graph's rules (docs/architecture.md), checked by `npm run lint`. ESLint's per-folder rules in
// eslint.config.mjs hold the server's inner arrows (frontends -> core facade -> backends); these hold the graph as a
// whole: no cycles anywhere, and each tool and the client reached only through its index.ts.
const TOOLS = ["tools/perf", "tools/tune", "tools/model-builder", "tools/optimize", "client"];

/** From outside a tool (tests excepted: unit tests test internals) to any of its modules but index.ts. */
const pastIndex = (tool) => ({
  name: `${tool.replace("/", "-")}-only-through-index`,
  comment: `Import ${tool} only through ${tool}/index.ts, its public surface.`,
  severity: "error",
  from: { pathNot: [`^${tool}/`, "^tests/"] },
  to: { path: `^${tool}/`, pathNot: `^${tool}/index\\.ts$` },
});

/** A folder that imports none of `forbidden` (nor bench/ or infra/, which nothing shipped may import). */
const mayNotImport = (name, comment, folder, forbidden) => ({
  name,
  comment,
  severity: "error",
  from: { path: `^${folder}/` },
  to: { path: `^(${[...forbidden, "bench", "infra"].join("|")})/` },
});

module.exports = {
  forbidden: [
    { name: "no-circular", comment: "Import cycles make load order and ownership unclear.", severity: "error", from: {}, to: { circular: true } },
    ...TOOLS.map(pastIndex),
    mayNotImport("protocol-is-a-leaf", "protocol/ is the vocabulary every layer imports; it imports none of them.", "protocol", ["server", "client", "tools", "common"]),
    mayNotImport("common-is-a-leaf", "common/ holds helpers the server and the tools share; it imports none of them.", "common", ["server", "client", "tools", "protocol"]),
    mayNotImport("server-stands-alone", "The server never imports the client or a tool: they are run beside it, not inside it.", "server", ["client", "tools"]),
    mayNotImport("client-sees-only-the-wire", "The client knows the protocol, not the server's code.", "client", ["server", "tools"]),
    {
      name: "tracing-sees-the-core-through-its-facade",
      comment: "Tracing implements the core's trace interface from the side (as metrics do): it imports server/core/index.ts only, and the core never imports tracing.",
      severity: "error",
      from: { path: "^server/tracing/" },
      to: { path: "^server/(core/(?!index\\.ts$)|frontends/|backends/|metrics/)" },
    },
    {
      name: "core-never-imports-tracing",
      comment: "The core declares the trace interface; tracing implements it and main.ts wires them.",
      severity: "error",
      from: { path: "^server/core/" },
      to: { path: "^server/tracing/" },
    },
    {
      name: "tools-see-the-server-through-its-facade",
      comment: "A tool may use the server's core facade (config parsing) and the published TypeScript-model contract, never the server's internals.",
      severity: "error",
      from: { path: "^tools/" },
      to: { path: "^server/", pathNot: "^server/(core/index|backends/typescript/index)\\.ts$" },
    },
    {
      name: "bench-sees-the-server-through-its-entry-points",
      comment: "The benchmarks use the server as a library (server/index.ts) and the facades the tools use, never its internals.",
      severity: "error",
      from: { path: "^bench/" },
      to: { path: "^server/", pathNot: "^server/(index|core/index|tracing/index|backends/typescript/index)\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist|models)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".mts", ".js", ".json"] },
  },
};
