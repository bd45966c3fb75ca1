import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinBytesElements } from "../../protocol/tensor-bytes";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";
import { type BinaryTransports, binaryTransports } from "./binary-transports";
import type { CaseResult } from "./protocol-transport";

const PHOTOS = ["mug.jpg", "fish.png", "kitten_224.png", "vulture.jpeg", "image.jpg"];
const photo = (name: string): Uint8Array => new Uint8Array(readFileSync(path.join(SHARED_DATA, "images", name)));

interface Classified {
  readonly classes: readonly string[];
  readonly passes: readonly number[];
}

function classified(result: CaseResult): Classified {
  if (result.kind === "error") throw new Error(`${result.code}: ${result.message}`);
  const output = (name: string) => result.outputs.find((o) => o.name === name)?.values ?? [];
  return { classes: output("CLASSES").map(String), passes: output("PASSES").map(Number) };
}

/**
 * image_classifier_bls, the example BLS model: the image classifier's pipeline as a TypeScript model that calls
 * image_preprocess, squeezenet and image_postprocess, and classifies a second crop of the images it is unsure of.
 */
describe("image_classifier_bls: the image classifier as a model calling models", () => {
  let server: RunningServer;
  let clients: BinaryTransports;

  beforeAll(async () => {
    server = await startServer({
      services: ["http", "grpc"],
      args: ["--model-control-mode", "explicit", "--load-model", "image_classifier", "--load-model", "image_classifier_bls"],
    });
    clients = binaryTransports(server);
  });
  afterAll(async () => {
    clients?.close();
    await server?.stop();
  });

  function classify(model: string, images: readonly Uint8Array[], parameters: Record<string, number> = {}): Promise<CaseResult> {
    return clients.byProtocol.REST.infer({
      model, inputs: [{ name: "IMAGE", datatype: "BYTES", shape: [images.length, 1], raw: joinBytesElements(images) }], parameters,
      outputs: model === "image_classifier" ? [{ name: "CLASSES" }] : [{ name: "CLASSES" }, { name: "PASSES" }],
    });
  }

  async function squeezenetRuns(): Promise<number> {
    const body = await fetch(`${server.httpUrl}/v2/models/squeezenet/stats`).then((r) => r.json()) as { model_stats: { inference_count: number }[] };
    return body.model_stats[0]!.inference_count;
  }

  it("answers what the ensemble answers when it takes one pass, and counts its calls in squeezenet's statistics", async () => {
    for (const name of PHOTOS) {
      const ensemble = classified(await classify("image_classifier", [photo(name)], { k: 3 }));
      const before = await squeezenetRuns();
      expect(classified(await classify("image_classifier_bls", [photo(name)], { k: 3, min_confidence: 0 }))).toEqual({ classes: ensemble.classes, passes: [1] });
      expect(await squeezenetRuns()).toBe(before + 1);
    }
  });

  it("classifies a second crop exactly for the images whose best class scores below min_confidence (default 0.8)", async () => {
    const runs: number[] = [];
    for (const name of PHOTOS) {
      const [best] = classified(await classify("image_classifier", [photo(name)])).classes;
      const unsure = Number(best!.split(":")[0]) < 0.8;
      const before = await squeezenetRuns();
      const result = classified(await classify("image_classifier_bls", [photo(name)], {}));
      expect(result.passes).toEqual([unsure ? 2 : 1]);
      expect(await squeezenetRuns()).toBe(before + (unsure ? 2 : 1));
      runs.push(result.passes[0]!);
    }
    expect(new Set(runs), "the photos include sure and unsure ones").toEqual(new Set([1, 2]));
    expect(await classify("image_classifier_bls", [photo("mug.jpg")], { min_confidence: 1 })).toMatchObject({ kind: "ok", outputs: [expect.anything(), { values: [2] }] });
  });

  it("takes a batch of images, retrying only those it is unsure of", async () => {
    const singles = await Promise.all(PHOTOS.map(async (name) => classified(await classify("image_classifier_bls", [photo(name)], { k: 2 }))));
    const batch = classified(await classify("image_classifier_bls", PHOTOS.map(photo), { k: 2 }));
    expect(batch).toEqual({ classes: singles.flatMap((single) => single.classes), passes: singles.flatMap((single) => single.passes) });
  });

  it("fails a request with the code and message of the model call that failed", async () => {
    expect(await classify("image_classifier_bls", [new TextEncoder().encode("not an image")])).toEqual({
      kind: "error", code: "INVALID_ARG", message: "image_preprocess: IMAGE element 0 is not a JPEG or PNG image",
    });
    expect(await classify("image_classifier_bls", [photo("mug.jpg")], { k: 0 })).toMatchObject({ kind: "error", code: "INVALID_ARG", message: expect.stringMatching(/^image_postprocess: request parameter 'k'/) });
  });
});
