import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { PNG } from "pngjs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PerfRun, runPerf } from "../helpers/perf-process";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";

let server: RunningServer;
let workDir: string;

beforeAll(async () => {
  server = await startServer({
    services: ["http", "grpc"],
    args: ["--model-control-mode", "explicit", "--load-model", "simple", "--load-model", "identity_fp32", "--load-model", "image_classifier"],
  });
  workDir = await mkdtemp(path.join(os.tmpdir(), "inference-perf-"));
});

afterAll(async () => {
  await server?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

describe("inference-perf against the server", () => {
  it("profiles two concurrency levels and writes perf_analyzer's CSV, JSON and a valid chart report", async () => {
    const csvFile = path.join(workDir, "results.csv");
    const jsonFile = path.join(workDir, "results.json");
    const reportDir = path.join(workDir, "report");
    const run = await runPerf([
      "-m", "simple", "-u", server.httpUrl, "--concurrency-range", "1:2", "-p", "300", "-r", "3",
      "-f", csvFile, "--json", jsonFile, "--report", reportDir,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`simple at ${server.httpUrl} (http, batch 1, binary in / binary out, 300 ms windows)`);
    expect(run.stdout).toMatch(/^concurrency\s+infer\/s\s+p50 ms/m);

    const [header, ...rows] = (await readFile(csvFile, "utf8")).trimEnd().split("\n");
    expect(header).toBe("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
      + "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency");
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const cells = row.split(",").map(Number);
      expect(cells).toHaveLength(13);
      expect(cells.every((cell) => Number.isFinite(cell) && cell >= 0)).toBe(true);
      expect(cells[1]).toBeGreaterThan(0);
      expect(cells[6]).toBeGreaterThan(0); // compute infer, from the statistics extension
    }
    expect(rows.map((row) => Number(row.split(",")[0])).sort()).toEqual([1, 2]);

    const json = JSON.parse(await readFile(jsonFile, "utf8")) as { model: string; mode: string; results: { concurrency: number; server: { successCount: number } }[] };
    expect(json).toMatchObject({ tool: "inference-perf", model: "simple", mode: "concurrency", batchSize: 1, measurementIntervalMs: 300 });
    expect(json.results.map((result) => result.concurrency)).toEqual([1, 2]);
    for (const result of json.results) {
      expect(result).toMatchObject({
        windows: expect.any(Number), requestCount: expect.any(Number), throughput: expect.any(Number),
        latencyUs: { avg: expect.any(Number), p50: expect.any(Number), p90: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number) },
        server: { queueUs: expect.any(Number), computeInputUs: expect.any(Number), computeInferUs: expect.any(Number), computeOutputUs: expect.any(Number) },
      });
      expect(result.server.successCount).toBeGreaterThan(0);
    }

    const svg = await readFile(path.join(reportDir, "latency-vs-throughput.svg"));
    expect((await sharp(svg).metadata()).format).toBe("svg");
    expect(svg.toString()).toContain("throughput (infer/s)");
    const png = await readFile(path.join(reportDir, "latency-vs-throughput.png"));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(PNG.sync.read(png).width).toBeGreaterThan(100);
    const html = await readFile(path.join(reportDir, "index.html"), "utf8");
    expect(html).toContain("<svg");
    expect(html).toContain("latency-vs-throughput.png");
    // The header a reader needs to trust or repeat the run; the points carry their concurrency.
    expect(html).toMatch(/<li>measured \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ on .+, \d+ cores, /);
    expect(html).toMatch(/<li>server: triton \d+\.\d+\.\d+<\/li>/);
    expect(html).toContain(`<li>command: inference-perf -m simple`);
    expect(svg.toString()).toMatch(/>c1<\/text>/);
  });

  it("profiles over gRPC, with the server-side breakdown from the gRPC statistics", async () => {
    const run = await runPerf(["-m", "simple", "-i", "grpc", "-u", server.grpcAddress!, "-p", "200", "-r", "3", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as { url: string; protocol: string; results: { requestCount: number; server: { successCount: number } }[] };
    expect(json).toMatchObject({ url: `grpc://${server.grpcAddress}`, protocol: "grpc" });
    expect(json.results[0]!.requestCount).toBeGreaterThan(0);
    expect(json.results[0]!.server.successCount).toBeGreaterThan(0);
  });

  it("feeds a variable-shape model from --shape or a perf_analyzer data file, JSON to stdout", async () => {
    const dataFile = path.join(workDir, "data.json");
    await writeFile(dataFile, JSON.stringify({ data: [{ INPUT0: { content: [1, 2, 3, 4], shape: [4] } }, { INPUT0: [5, 6, 7, 8] }] }));
    const run = await runPerf(["-m", "identity_fp32", "-u", server.httpUrl, "-p", "200", "-r", "3", "--input-data", dataFile, "--shape", "INPUT0:4", "--json", "--input-tensor-format", "json"]);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as { inputTensorFormat: string; results: { requestCount: number }[] };
    expect(json.inputTensorFormat).toBe("json");
    expect(json.results[0]!.requestCount).toBeGreaterThan(0);
    expect(run.stderr).toContain("identity_fp32 at");
  });
});

describe("inference-perf with encoded images for a BYTES input", () => {
  const photos = ["fish.png", "kitten_224.png"];

  async function imageStatistics(): Promise<number> {
    const stats = await fetch(`${server.httpUrl}/v2/models/image_classifier/stats`).then((r) => r.json()) as { model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[] };
    const entry = stats.model_stats[0]!.inference_stats;
    expect(entry.fail.count).toBe(0);
    return entry.success.count;
  }

  it("sends one image per file of a directory, batched with -b", async () => {
    const imageDir = path.join(workDir, "images");
    await mkdir(imageDir);
    for (const photo of photos) await copyFile(path.join(SHARED_DATA, "images", photo), path.join(imageDir, photo));
    const before = await imageStatistics();
    const run = await runPerf(["-m", "image_classifier", "-u", server.httpUrl, "-b", "2", "-p", "300", "-r", "3", "--input-data", imageDir, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as {
      batchSize: number;
      results: { requestCount: number; server: { computeInferUs: number; composingModels: { model: string; version: string; successCount: number; computeInferUs: number }[] } }[];
    };
    expect(json.batchSize).toBe(2);
    expect(json.results[0]!.requestCount).toBeGreaterThan(0);
    expect(await imageStatistics()).toBeGreaterThan(before);
    // The ensemble's time is broken down by its steps, not all "server overhead".
    const { server: breakdown } = json.results[0]!;
    expect(breakdown.composingModels.map((step) => `${step.model} v${step.version}`)).toEqual(["image_preprocess v1", "squeezenet v1", "image_postprocess v1"]);
    for (const step of breakdown.composingModels) expect(step.successCount).toBeGreaterThan(0);
    expect(breakdown.computeInferUs).toBeGreaterThan(0);
    expect(run.stderr).toContain("image_classifier is an ensemble: its queue and compute above are its composing models' totals per request; per composing model:");
    expect(run.stderr).toMatch(/^squeezenet v1\s+1\s+[\d.]+\s+[\d.]+\s+[\d.]+\s/m);
  });

  it("sends the images of a perf_analyzer data file given as {\"b64\": ...}, over gRPC", async () => {
    const dataFile = path.join(workDir, "images.json");
    const data = await Promise.all(photos.map(async (photo) => ({ IMAGE: { b64: (await readFile(path.join(SHARED_DATA, "images", photo))).toString("base64") } })));
    await writeFile(dataFile, JSON.stringify({ data }));
    const before = await imageStatistics();
    const run = await runPerf(["-m", "image_classifier", "-i", "grpc", "-u", server.grpcAddress!, "-p", "300", "-r", "3", "--input-data", dataFile, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { results: { requestCount: number }[] }).results[0]!.requestCount).toBeGreaterThan(0);
    expect(await imageStatistics()).toBeGreaterThan(before);
  });
});

describe("inference-perf bad input: non-zero exit, one clear line, no stack trace", () => {
  const expectOneLine = (run: PerfRun, pattern: RegExp): void => {
    expect(run.code).not.toBe(0);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  };

  it("names an unknown model", async () => {
    expectOneLine(await runPerf(["-m", "no_such_model", "-u", server.httpUrl]),
      /^inference-perf: error: model 'no_such_model' is not served by http:\/\/127\.0\.0\.1:\d+: .*not found/);
  });

  it("says the server cannot be reached", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    expectOneLine(await runPerf(["-m", "simple", "-u", `127.0.0.1:${port}`]),
      new RegExp(`^inference-perf: error: cannot reach an inference server at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
  });

  it("asks for --shape when an input has a variable dimension", async () => {
    expectOneLine(await runPerf(["-m", "identity_fp32", "-u", server.httpUrl]),
      /^inference-perf: error: input 'INPUT0' has a variable dimension \(shape \[-1\]\); give it with --shape INPUT0:N$/);
  });

  it("rejects a batch larger than the model's max_batch_size, and bad flags", async () => {
    expectOneLine(await runPerf(["-m", "simple", "-u", server.httpUrl, "-b", "9"]), /^inference-perf: error: -b 9 is larger than model 'simple''s max_batch_size 8$/);
    expectOneLine(await runPerf(["-m", "simple", "--concurrency-range", "x"]), /^error: option '--concurrency-range <start:end:step>' argument 'x' is invalid/);
  });
});
