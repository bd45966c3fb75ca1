import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InferenceClient, type InferInput } from "../client/index";
import { type ComparisonResult, measureThroughput, preparedSender, runAbComparison } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";

function identityConfig(backend: string): string {
  return [
    `backend: "${backend}"`, "max_batch_size: 8",
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]', 'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n");
}

/**
 * What the TypeScript backend costs per request: the same identity model, FP32 [1,16], as a TypeScript model
 * (a worker thread, the request crossing to it and back) against the built-in identity backend (on the main
 * thread), same config, same load, one server.
 */
export async function runTypeScriptBackendSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const repository = mkdtempSync(path.join(os.tmpdir(), "bench-typescript-"));
  for (const [name, backend] of [["identity_typescript", "typescript"], ["identity_builtin", "identity"]] as const) {
    mkdirSync(path.join(repository, name, "1"), { recursive: true });
    writeFileSync(path.join(repository, name, "config.pbtxt"), identityConfig(backend));
  }
  copyFileSync(path.join(__dirname, "typescript-identity-model.js"), path.join(repository, "identity_typescript", "1", "model.js"));
  const server = await startInferenceServerProcess(repository, ["--allow-metrics", "false", "--allow-grpc", "false"], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  try {
    const concurrency = options.simpleConcurrency;
    const inputs: InferInput[] = [{ name: "INPUT0", datatype: "FP32", shape: [1, 16], data: Float32Array.from({ length: 16 }, (_, i) => i) }];
    const at = (model: string) => () =>
      measureThroughput(preparedSender(client, model, inputs), { concurrency, warmupMs: options.warmupMs, durationMs: options.windowMs });
    context.notes.push(`typescript: identity FP32 [1,16] at concurrency ${concurrency}, HTTP binary, 1 instance each: a TypeScript-backend model (worker thread) vs the built-in identity backend (main thread)`);
    return [await runAbComparison(
      "identity: TypeScript backend / built-in", `concurrency ${concurrency}, binary`,
      { label: "TypeScript model", measure: at("identity_typescript") },
      { label: "built-in identity", measure: at("identity_builtin") },
      options.rounds,
      (round, r) => log(`typescript round ${round}: TypeScript ${r.a.throughput.toFixed(0)}, built-in ${r.b.throughput.toFixed(0)} req/s (${r.ratio.toFixed(2)}; p50 ${r.a.p50Ms.toFixed(2)} vs ${r.b.p50Ms.toFixed(2)} ms)`),
    )];
  } finally {
    await client.close();
    await server.process.stop();
    rmSync(repository, { recursive: true, force: true });
  }
}
