import { readFileSync } from "node:fs";
import path from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinBytesElements } from "../../protocol/tensor-bytes";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";
import { parseExposition } from "../server/metrics/prometheus-text";
import { type BinaryTransports, binaryTransports, type Protocol } from "./binary-transports";
import type { CaseResult, ProtocolTransport } from "./protocol-transport";

const photo = (name: string): Uint8Array => new Uint8Array(readFileSync(path.join(SHARED_DATA, "images", name)));

/** A PNG whose header claims 20000 x 20000 RGB pixels (and holds one row): decoding it would take 1.2 GB. */
function hugePngHeader(): Uint8Array {
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.byteLength);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(20_000, 0);
  header.writeUInt32BE(20_000, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  return new Uint8Array(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.alloc(1 + 20_000 * 3))), chunk("IEND", Buffer.alloc(0))]));
}

const mug = photo("mug.jpg");
const BROKEN: readonly { what: string; bytes: Uint8Array; message: RegExp }[] = [
  { what: "a text file", bytes: new TextEncoder().encode("this is not an image\n"), message: /IMAGE element 0 is not a JPEG or PNG image$/ },
  { what: "a truncated JPEG", bytes: mug.subarray(0, mug.byteLength / 3), message: /IMAGE element 0 cannot be decoded: .*(premature end|truncated)/i },
  { what: "a PNG header claiming 20000x20000", bytes: hugePngHeader(), message: /IMAGE element 0 cannot be decoded: Input image exceeds pixel limit/ },
];

function classify(transport: ProtocolTransport, images: readonly Uint8Array[], k?: number): Promise<CaseResult> {
  return transport.infer({
    model: "image_classifier",
    inputs: [{ name: "IMAGE", datatype: "BYTES", shape: [images.length, 1], raw: joinBytesElements(images) }],
    outputs: [{ name: "CLASSES" }],
    ...(k !== undefined ? { parameters: { k } } : {}),
  });
}

function classes(result: CaseResult): { shape: readonly number[]; values: string[] } {
  if (result.kind === "error") throw new Error(`${result.code}: ${result.message}`);
  const output = result.outputs[0]!;
  return { shape: output.shape, values: output.values.map(String) };
}

describe("image_classifier: JPEG/PNG bytes in, ImageNet classes out (TypeScript pre/post-processing around SqueezeNet)", () => {
  let server: RunningServer;
  let clients: BinaryTransports;

  beforeAll(async () => {
    server = await startServer({
      services: ["http", "grpc", "metrics"], args: ["--model-control-mode", "explicit", "--load-model", "image_classifier"],
    });
    clients = binaryTransports(server);
  });
  afterAll(async () => {
    clients?.close();
    await server?.stop();
  });

  describe.each<Protocol>(["REST", "gRPC"])("over %s", (protocol) => {
    it.each([
      ["mug.jpg", /^0\.9\d{5}:504:COFFEE MUG$/],
      ["kitten_224.png", /^0\.93\d{4}:281:TABBY$/],
      ["fish.png", /^0\.73\d{4}:0:TENCH$/],
    ])("classifies %s as ../shared/data/README.md says", async (name, top1) => {
      const result = classes(await classify(clients.byProtocol[protocol], [photo(name)]));
      expect(result.shape).toEqual([1, 1]);
      expect(result.values[0]).toMatch(top1);
    });

    it("answers the top k classes for k given as a request parameter, for each image of a batch", async () => {
      const result = classes(await classify(clients.byProtocol[protocol], [photo("kitten_224.png"), photo("fish.png")], 3));
      expect(result.shape).toEqual([2, 3]);
      expect(result.values.map((value) => value.split(":").slice(1).join(":"))).toEqual([
        "281:TABBY", "285:EGYPTIAN CAT", "282:TIGER CAT", "0:TENCH", "389:BARRACOUTA", "395:GAR",
      ]);
      expect(Number(result.values[3]!.split(":")[0])).toBeCloseTo(0.7378, 2);
    });

    it.each(BROKEN)("refuses $what with INVALID_ARG naming the image", async ({ bytes, message }) => {
      const result = await classify(clients.byProtocol[protocol], [bytes]);
      expect(result).toMatchObject({ kind: "error", code: "INVALID_ARG", message: expect.stringMatching(/^in ensemble 'image_classifier', /) });
      expect((result as { message: string }).message).toMatch(message);
    });

    it("refuses a k that is not a positive integer", async () => {
      const result = await classify(clients.byProtocol[protocol], [photo("fish.png")], 0);
      expect(result).toEqual({ kind: "error", code: "INVALID_ARG", message: "in ensemble 'image_classifier', request parameter 'k' must be a positive integer, got '0'" });
    });
  });

  it("answers the good requests of a batch that also holds broken images, and no worker dies", async () => {
    const good = ["kitten_224.png", "fish.png", "mug.jpg"].map(photo);
    const requests = [...good.map((image) => [image]), ...BROKEN.map(({ bytes }) => [bytes])];
    type Stats = { model_stats: { execution_count: number; inference_count: number }[] };
    const stats = (): Promise<Stats["model_stats"][number]> => fetch(`${server.httpUrl}/v2/models/image_preprocess/stats`).then(async (r) => ((await r.json()) as Stats).model_stats[0]!);
    // Whether the dynamic batcher (no queue delay) puts requests of one burst together depends on how they reach it
    // on this machine, so bursts repeat, each checked in full, until one shared an execution (or five did not).
    let batched = false;
    for (let burst = 0; burst < 5 && !batched; burst++) {
      const before = await stats();
      const results = await Promise.all(requests.map((images, i) => classify(clients.byProtocol[i % 2 === 0 ? "REST" : "gRPC"], images)));
      expect(results.slice(0, 3).map((result) => classes(result).values[0]!.split(":").slice(1).join(":"))).toEqual(["281:TABBY", "0:TENCH", "504:COFFEE MUG"]);
      expect(results.slice(3).map((result) => result.kind === "error" && result.code)).toEqual(["INVALID_ARG", "INVALID_ARG", "INVALID_ARG"]);
      const after = await stats();
      expect(after.inference_count - before.inference_count).toBe(6);
      batched = after.execution_count - before.execution_count < 6;
    }
    expect(batched).toBe(true); // the dynamic batcher put good and broken images in the same execution
    const metrics = parseExposition(await fetch(`${server.metricsUrl}/metrics`).then((r) => r.text()));
    expect(metrics.value("inference_instance_restarts_total", { model: "image_preprocess", version: "1" })).toBe(0);
    expect(metrics.value("inference_instance_count", { model: "image_preprocess", version: "1" })).toBe(2);
  });

  it("answers a plain REST client that sends the image as the binary tensor (curl --data-binary)", async () => {
    const image = photo("kitten_224.png");
    const element = joinBytesElements([image]);
    const header = JSON.stringify({
      inputs: [{ name: "IMAGE", datatype: "BYTES", shape: [1, 1], parameters: { binary_data_size: element.byteLength } }],
      outputs: [{ name: "CLASSES", parameters: { binary_data: false } }],
      parameters: { k: 2 },
    });
    const response = await fetch(`${server.httpUrl}/v2/models/image_classifier/infer`, {
      method: "POST", body: Buffer.concat([Buffer.from(header), element]), headers: { "inference-header-content-length": String(Buffer.byteLength(header)) },
    });
    expect(response.status).toBe(200);
    const body = await response.json() as { outputs: { name: string; datatype: string; shape: number[]; data: string[] }[] };
    expect(body.outputs[0]).toMatchObject({ name: "CLASSES", datatype: "BYTES", shape: [1, 2] });
    expect(body.outputs[0]!.data[0]).toMatch(/^0\.93\d{4}:281:TABBY$/);
  });
});
