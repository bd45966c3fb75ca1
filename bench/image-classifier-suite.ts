import { readFileSync } from "node:fs";
import path from "node:path";
import type { ExecuteContext, ExecuteResponse, InitializeArgs, ModelConfigJson, Tensor, TypeScriptModel, TypeScriptModelClass } from "../server/backends/typescript/index";
import { InferenceClient, type PreparedInferRequest } from "../client/index";
import { type ComparisonResult, measureThroughput, type RequestSender, runAbComparison, type SideMeasurement } from "../tools/perf/index";
import type { BenchContext } from "./bench-context";
import { startInferenceServerProcess } from "../tools/tune/index";
import { sweepForBest } from "./sweep-for-best";

/** The photos of ../shared/data, sent in turn: a 3361x2521 JPEG, two 224x224 PNGs, two small JPEGs. */
const PHOTOS = ["mug.jpg", "kitten_224.png", "fish.png", "image.jpg", "vulture.jpeg"];

/** A step of the pipeline run in this process: the same compiled model.js the server runs, called directly. */
/** The pre- and postprocessing models call no other model. */
const NO_MODEL_CALLS: ExecuteContext = {
  infer: (model) => Promise.reject(new Error(`no model calls here (to '${model}')`)),
  inferStream: (model) => {
    throw new Error(`no model calls here (to '${model}')`);
  },
};

async function localModel(client: InferenceClient, modelRepository: string, name: string): Promise<TypeScriptModel> {
  const directory = path.join(modelRepository, name);
  // The generated repository lies inside the package, so model.js resolves sharp and the package as it does in the server.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ModelClass = (require(path.join(directory, "1", "model.js")) as { default: TypeScriptModelClass }).default;
  const model = new ModelClass();
  const args: InitializeArgs = {
    modelConfig: (await client.modelConfig(name)) as unknown as ModelConfigJson, modelName: name, modelVersion: 1,
    modelDirectory: directory, versionDirectory: path.join(directory, "1"), instanceName: `${name}_client`, instanceKind: "KIND_CPU", deviceId: 0,
  };
  await model.initialize?.(args);
  return model;
}

function outputOf(responses: readonly ExecuteResponse[] | void, name: string): Tensor {
  const response = responses?.[0];
  if (response === undefined) throw new Error("the model returned no response");
  if ("error" in response) throw new Error(response.error.message);
  return response.outputs[name] as Tensor;
}

/**
 * image_classifier (JPEG/PNG bytes in, top class out) against the same work split the usual way: a client that
 * decodes and resizes the images itself and sends the FP16 tensor to squeezenet, then picks the top class. The
 * client runs the very model.js files of image_preprocess and image_postprocess (the same sharp code), in the load
 * generator's process; both sides share the machine's cores. Each side runs at its best concurrency of a sweep.
 */
export async function runImageClassifierSuite(context: BenchContext): Promise<ComparisonResult[]> {
  const { options, log } = context;
  const server = await startInferenceServerProcess(context.modelRepository, [
    "--allow-metrics", "false", "--allow-grpc", "false", "--model-control-mode", "explicit", "--load-model", "image_classifier",
  ], context.options.serverRoot);
  const client = new InferenceClient({ url: server.httpUrl });
  try {
    const photos = PHOTOS.map((name) => new Uint8Array(readFileSync(path.join(context.repositoryRoot, "..", "shared", "data", "images", name))));
    const prepared: PreparedInferRequest[] = photos.map((photo) => client.prepareInfer("image_classifier", [{ name: "IMAGE", datatype: "BYTES", shape: [1, 1], data: [photo] }]));
    let nextEnsemble = 0;
    const ensemble: RequestSender = async () => {
      const result = await client.inferPrepared(prepared[nextEnsemble++ % prepared.length]!);
      return { sendNs: result.timing.sendNs, receiveNs: result.timing.receiveNs };
    };
    const [preprocess, postprocess] = await Promise.all([localModel(client, context.modelRepository, "image_preprocess"), localModel(client, context.modelRepository, "image_postprocess")]);
    let nextClient = 0;
    const clientSide: RequestSender = async () => {
      const photo = photos[nextClient++ % photos.length]!;
      const image = outputOf(await preprocess.execute([{ inputs: { IMAGE: { datatype: "BYTES", shape: [1, 1], data: [photo] } }, parameters: {}, requestedOutputs: ["IMAGE_TENSOR"] }], NO_MODEL_CALLS), "IMAGE_TENSOR");
      const result = await client.infer("squeezenet", [{ name: "data_0", datatype: "FP16", shape: [...image.shape], data: image.data as Uint16Array }]);
      const probabilities: Tensor = { datatype: "FP16", shape: [1, 1000, 1, 1], data: result.data("softmaxout_1", "FP16") };
      outputOf(await postprocess.execute([{ inputs: { PROBABILITIES: probabilities }, parameters: {}, requestedOutputs: ["CLASSES"] }], NO_MODEL_CALLS), "CLASSES");
      return { sendNs: result.timing.sendNs, receiveNs: result.timing.receiveNs };
    };
    const at = (send: RequestSender, concurrency: number, durationMs = options.windowMs) => (): Promise<SideMeasurement> =>
      measureThroughput(send, { concurrency, warmupMs: options.warmupMs, durationMs });

    const sweep = async (label: string, send: RequestSender): Promise<number> => (await sweepForBest(context, {
      label: `image sweep: ${label} concurrency`, series: `image: ${label}`, unit: "images/s", settings: options.imageConcurrency,
      measure: (concurrency) => at(send, concurrency, options.calibrationWindowMs)(),
    })).setting;
    const ensembleConcurrency = await sweep("ensemble", ensemble);
    const clientConcurrency = await sweep("client preprocesses", clientSide);
    context.notes.push(
      `image: ${PHOTOS.join(", ")} in turn, HTTP binary; the image_classifier ensemble (configs as generated) vs the load generator running the same image_preprocess/image_postprocess model.js itself around squeezenet calls; each at its best concurrency of ${options.imageConcurrency.join(",")}`,
    );
    return [await runAbComparison(
      "image_classifier", `ensemble concurrency ${ensembleConcurrency}, client-side preprocessing concurrency ${clientConcurrency}`,
      { label: "ensemble (bytes in)", measure: at(ensemble, ensembleConcurrency) },
      { label: "client preprocesses", measure: at(clientSide, clientConcurrency) },
      options.rounds,
      (round, r) => log(`image round ${round}: ensemble ${r.a.throughput.toFixed(1)}, client preprocesses ${r.b.throughput.toFixed(1)} images/s (${r.ratio.toFixed(2)})`),
    )];
  } finally {
    await client.close();
    await server.process.stop();
  }
}
