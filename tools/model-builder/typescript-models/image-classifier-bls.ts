/**
 * `image_classifier_bls` (backend "typescript"): the image classifier as a model that calls models (Business Logic
 * Scripting) instead of an ensemble, with a decision an ensemble cannot make. Each encoded image goes through
 * `image_preprocess` and `squeezenet`; when SqueezeNet's best class for an image scores below the request parameter
 * `min_confidence` (default 0.8), the model classifies a second crop - the image's centre, zoomed 2x - and keeps
 * the more confident of the two passes for that image. `image_postprocess` then answers the top `k` classes (parameter `k`) as
 * the ensemble does. PASSES says how many classifier passes the image took (1 or 2). Every call is made for its
 * own request, so calls from concurrent requests batch in each callee's dynamic batcher.
 */
import {
  type ExecuteContext, type ExecuteRequest, type ExecuteResponse, fp16ToFloat32Array, inputTensor, isModelCallError, type Tensor, type TypeScriptModel,
} from "gcp-inference-stack/typescript-backend";

const DEFAULT_MIN_CONFIDENCE = 0.8;

/** Each image's best class probability in SqueezeNet's FP16 softmax output (one row per image). */
function topScores(probabilities: Tensor): number[] {
  if (probabilities.datatype !== "FP16") throw new Error(`squeezenet answered ${probabilities.datatype}, not FP16`);
  const scores = fp16ToFloat32Array(probabilities.data);
  const rows = probabilities.shape[0] ?? 1;
  const size = scores.length / rows;
  return Array.from({ length: rows }, (_, row) => scores.subarray(row * size, (row + 1) * size).reduce((best, score) => Math.max(best, score), 0));
}

/** For the rows `retried`, the more confident of two passes' probabilities; the first pass's for the others. */
function moreConfident(first: Pass, second: Pass, retried: readonly boolean[]): Pass {
  const data = Uint16Array.from(first.probabilities.data as Uint16Array);
  const size = data.length / first.scores.length;
  const scores = first.scores.map((score, row) => {
    if (!retried[row] || second.scores[row]! <= score) return score;
    data.set((second.probabilities.data as Uint16Array).subarray(row * size, (row + 1) * size), row * size);
    return second.scores[row]!;
  });
  return { probabilities: { datatype: "FP16", shape: first.probabilities.shape, data }, scores };
}

interface Pass {
  readonly probabilities: Tensor;
  readonly scores: readonly number[];
}

/**
 * The centre half of an NCHW image, scaled back to the full size (nearest neighbour). FP16 values are copied as
 * their bit patterns: no conversion needed.
 */
function centreCrop(image: Tensor): Tensor {
  if (image.datatype !== "FP16") throw new Error(`image_preprocess answered ${image.datatype}, not FP16`);
  const [batch = 1, channels = 3, height = 224, width = 224] = image.shape;
  const zoomed = new Uint16Array(image.data.length);
  const top = Math.floor(height / 4);
  const left = Math.floor(width / 4);
  for (let plane = 0; plane < batch * channels; plane++) {
    const base = plane * height * width;
    for (let y = 0; y < height; y++) {
      const row = base + (top + (y >> 1)) * width + left;
      for (let x = 0; x < width; x++) zoomed[base + y * width + x] = image.data[row + (x >> 1)]!;
    }
  }
  return { datatype: "FP16", shape: image.shape, data: zoomed };
}

function confidenceOf(request: ExecuteRequest): number {
  const value = Number(request.parameters["min_confidence"] ?? DEFAULT_MIN_CONFIDENCE);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new RangeError(`request parameter 'min_confidence' must be a number from 0 to 1, got '${String(request.parameters["min_confidence"])}'`);
  return value;
}

export default class ImageClassifierBls implements TypeScriptModel {
  execute(requests: readonly ExecuteRequest[], context: ExecuteContext): Promise<ExecuteResponse[]> {
    return Promise.all(requests.map((request) => this.#classify(request, context)));
  }

  async #classify(request: ExecuteRequest, context: ExecuteContext): Promise<ExecuteResponse> {
    try {
      const minConfidence = confidenceOf(request);
      const classify = async (image: Tensor): Promise<Pass> => {
        const { outputs } = await context.infer("squeezenet", { data_0: image }, { request, outputs: ["softmaxout_1"] });
        const probabilities = outputs["softmaxout_1"]!;
        return { probabilities, scores: topScores(probabilities) };
      };
      const preprocessed = await context.infer("image_preprocess", { IMAGE: inputTensor(request, "IMAGE", "BYTES") }, { request, outputs: ["IMAGE_TENSOR"] });
      const image = preprocessed.outputs["IMAGE_TENSOR"]!;
      let best = await classify(image);
      const unsure = best.scores.map((score) => score < minConfidence);
      // The batch's images share one second pass: one call, batched as the first.
      if (unsure.some(Boolean)) best = moreConfident(best, await classify(centreCrop(image)), unsure);
      const passes = Int32Array.from(unsure, (again) => (again ? 2 : 1));
      const k = request.parameters["k"];
      const classes = await context.infer("image_postprocess", { PROBABILITIES: best.probabilities }, {
        request, outputs: ["CLASSES"], ...(k === undefined ? {} : { parameters: { k } }),
      });
      return { outputs: { CLASSES: classes.outputs["CLASSES"]!, PASSES: { datatype: "INT32", shape: [passes.length, 1], data: passes } } };
    } catch (error) {
      // A callee's refusal (an image that is not one, a bad `k`) is this request's, with the callee's code.
      if (isModelCallError(error)) return { error: { code: error.code, message: `${error.model}: ${error.message}` } };
      if (error instanceof RangeError) return { error: { code: "INVALID_ARG", message: error.message } };
      throw error;
    }
  }
}
