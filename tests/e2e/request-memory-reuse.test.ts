import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import { OnnxGraphBuilder } from "../../tools/model-builder/index";
import { type RunningServer, startServer } from "../helpers/server-process";

const MODEL = "echo_rows";
/** 100,000 bytes a row: bodies and messages of one to three rows fall in the sizes whose memory is used again. */
const ROW = 25_000;
/** Past the backend's 64 KiB inline limit, so that the model runs on a worker, whose batches are gathered into spares. */
const PADDING_FLOATS = 32 * 1024;

/** An ONNX Identity of FP32 [N, ROW], batched up to 8 rows by the dynamic batcher, on one worker-thread instance. */
function writeEchoModel(repository: string): void {
  const g = new OnnxGraphBuilder(MODEL);
  g.addInput("INPUT0", "FLOAT", ["N", ROW]);
  g.addInitializer("padding", [PADDING_FLOATS], new Float32Array(PADDING_FLOATS));
  g.addNode({ opType: "Identity", inputs: ["INPUT0"], outputs: ["OUTPUT0"] });
  g.addOutput("OUTPUT0", "FLOAT", ["N", ROW]);
  mkdirSync(path.join(repository, MODEL, "1"), { recursive: true });
  writeFileSync(path.join(repository, MODEL, "1", "model.onnx"), g.toModelBytes());
  writeFileSync(path.join(repository, MODEL, "config.pbtxt"), [
    'platform: "onnxruntime_onnx"', "max_batch_size: 8",
    `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${ROW} ] } ]`,
    `output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${ROW} ] } ]`,
    "dynamic_batching { max_queue_delay_microseconds: 2000 }",
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n"));
}

/** Rows whose every value names its request, so that a response carrying another request's bytes is caught. */
function rowsOf(request: number, rows: number): Float32Array {
  const data = new Float32Array(rows * ROW);
  for (let i = 0; i < data.length; i++) data[i] = request * 1_000_000 + i;
  return data;
}

describe("request memory used again: bodies, gRPC messages and the worker's batch buffers", () => {
  let server: RunningServer;
  let repository: string;
  let clients: InferenceClient[];

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "memory-reuse-"));
    writeEchoModel(repository);
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--model-control-mode", "explicit", "--load-model", MODEL] });
    clients = [new InferenceClient({ url: server.httpUrl }), new InferenceClient({ url: `grpc://${server.grpcAddress!}` })];
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    server.process.kill("SIGKILL");
    rmSync(repository, { recursive: true, force: true });
  });

  it("answers every request with its own rows while batches of 1 to 8 rows reuse memory, beside requests that are abandoned", async () => {
    const wave = async (first: number): Promise<void> => {
      const answered = Array.from({ length: 96 }, async (_, i) => {
        const request = first + i;
        const rows = 1 + (request % 3);
        const data = rowsOf(request, rows);
        const result = await clients[request % 2]!.infer(MODEL, [{ name: "INPUT0", datatype: "FP32", shape: [rows, ROW], data }]);
        const output = result.data("OUTPUT0", "FP32");
        expect(output.length).toBe(data.length);
        // Compared as a whole, not element by element: 96 requests of up to 75,000 values each.
        expect(Buffer.from(output.buffer, output.byteOffset, output.byteLength).equals(Buffer.from(data.buffer))).toBe(true);
      });
      // Requests whose clients give up while they wait: their memory must never serve another request early.
      const abandoned = Array.from({ length: 16 }, async (_, i) => {
        const controller = new AbortController();
        const sent = clients[i % 2]!.infer(MODEL, [{ name: "INPUT0", datatype: "FP32", shape: [2, ROW], data: rowsOf(900 + i, 2) }], { signal: controller.signal });
        setImmediate(() => controller.abort());
        await sent.catch(() => undefined);
      });
      await Promise.all([...answered, ...abandoned]);
    };
    for (let round = 0; round < 4; round++) await wave(round * 1000);
  }, 120_000);
});
