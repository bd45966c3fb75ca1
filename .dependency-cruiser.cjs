// The import graph's rules (docs/architecture.md), checked by `npm run lint`. ESLint's per-folder rules in
// eslint.config.mjs hold the server's inner arrows (frontends -> core facade -> backends); these hold the graph as a
// whole: no cycles anywhere, and each tool and the client reached only through its index.ts.
const TOOLS = ["tools/perf", "tools/tune", "tools/model-builder", "client"];

/** From outside a tool (tests excepted: unit tests test internals) to any of its modules but index.ts. */
const pastIndex = (tool) => ({
  name: `${tool.replace("/", "-")}-only-through-index`,
  comment: `Import ${tool} only through ${tool}/index.ts, its public surface.`,
  severity: "error",
  from: { pathNot: [`^${tool}/`, "^tests/"] },
  to: { path: `^${tool}/`, pathNot: `^${tool}/index\\.ts$` },
});

module.exports = {
  forbidden: [
    { name: "no-circular", comment: "Import cycles make load order and ownership unclear.", severity: "error", from: {}, to: { circular: true } },
    ...TOOLS.map(pastIndex),
    {
      name: "protocol-is-a-leaf",
      comment: "protocol/ is the vocabulary every layer imports; it imports none of them.",
      severity: "error",
      from: { path: "^protocol/" },
      to: { path: "^(server|client|tools|common|bench|infra)/" },
    },
    {
      name: "common-is-a-leaf",
      comment: "common/ holds helpers the server and the tools share; it imports none of them.",
      severity: "error",
      from: { path: "^common/" },
      to: { path: "^(server|client|tools|protocol|bench|infra)/" },
    },
    {
      name: "server-stands-alone",
      comment: "The server never imports the client or a tool: they are run beside it, not inside it.",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^(client|tools|bench|infra)/" },
    },
    {
      name: "client-sees-only-the-wire",
      comment: "The client knows the protocol, not the server's code.",
      severity: "error",
      from: { path: "^client/" },
      to: { path: "^(server|tools|bench|infra)/" },
    },
    {
      name: "tools-see-the-server-through-its-facade",
      comment: "A tool may use the server's core facade (config parsing) and the published TypeScript-model contract, never the server's internals.",
      severity: "error",
      from: { path: "^tools/" },
      to: { path: "^server/", pathNot: "^server/(core/index|backends/typescript/index)\\.ts$" },
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
