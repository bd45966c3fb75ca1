/**
 * `image_preprocess` (backend "typescript"): one encoded JPEG or PNG per batch element in, the image tensor
 * SqueezeNet 1.1 (Caffe2 export) expects out: decoded (EXIF orientation applied, alpha dropped, grey made RGB),
 * resized straight to the output's height x width ignoring the aspect ratio (bilinear), BGR channel order, raw
 * 0-255 values (no scaling, no mean), NCHW, FP16 - the preprocessing ../shared/data/README.md gives for it.
 * An image that is not a JPEG/PNG, is truncated or corrupt, or has more pixels than the `max_input_pixels`
 * parameter allows fails its own request with INVALID_ARG; the other requests of the batch are answered.
 */
import sharp from "sharp";
import {
  type ExecuteRequest, type ExecuteResponse, float32ToFp16Array, type InitializeArgs, inputTensor, type TypeScriptModel,
} from "gcp-inference-stack/typescript-backend";

/** Pixel values are whole numbers 0-255, all exact in FP16: convert through a table. */
const FP16_OF_BYTE = float32ToFp16Array(Array.from({ length: 256 }, (_, value) => value));

const DEFAULT_MAX_INPUT_PIXELS = 40_000_000;

function isJpegOrPng(bytes: Uint8Array): boolean {
  const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((byte, i) => bytes[i] === byte);
  return jpeg || png;
}

class InvalidImage extends Error {}

export default class ImagePreprocess implements TypeScriptModel {
  #height = 224;
  #width = 224;
  #maxInputPixels = DEFAULT_MAX_INPUT_PIXELS;

  initialize(args: InitializeArgs): void {
    const dims = args.modelConfig.output[0]?.dims ?? [];
    if (dims.length !== 3 || dims[0] !== 3) throw new Error(`the output must have dims [3, height, width], got [${dims.join(", ")}]`);
    this.#height = dims[1]!;
    this.#width = dims[2]!;
    const limit = args.modelConfig.parameters["max_input_pixels"]?.string_value;
    if (limit !== undefined) {
      this.#maxInputPixels = Number(limit);
      if (!Number.isSafeInteger(this.#maxInputPixels) || this.#maxInputPixels < 1) throw new Error(`max_input_pixels must be a positive integer, got '${limit}'`);
    }
  }

  /** Requests decode side by side: sharp works on libuv's thread pool, off this thread. */
  execute(requests: readonly ExecuteRequest[]): Promise<ExecuteResponse[]> {
    return Promise.all(requests.map((request) => this.#preprocess(request)));
  }

  async #preprocess(request: ExecuteRequest): Promise<ExecuteResponse> {
    const images = inputTensor(request, "IMAGE", "BYTES");
    const planeSize = this.#height * this.#width;
    const out = new Uint16Array(images.data.length * 3 * planeSize);
    try {
      await Promise.all(images.data.map(async (image, index) => {
        const pixels = await this.#decode(image, index);
        const base = index * 3 * planeSize;
        // Interleaved RGB in, planar BGR out.
        for (let i = 0; i < planeSize; i++) {
          out[base + i] = FP16_OF_BYTE[pixels[i * 3 + 2]!]!;
          out[base + planeSize + i] = FP16_OF_BYTE[pixels[i * 3 + 1]!]!;
          out[base + 2 * planeSize + i] = FP16_OF_BYTE[pixels[i * 3]!]!;
        }
      }));
    } catch (error) {
      if (error instanceof InvalidImage) return { error: { code: "INVALID_ARG", message: error.message } };
      throw error;
    }
    return { outputs: { IMAGE_TENSOR: { datatype: "FP16", shape: [images.data.length, 3, this.#height, this.#width], data: out } } };
  }

  async #decode(image: Uint8Array, index: number): Promise<Buffer> {
    if (!isJpegOrPng(image)) throw new InvalidImage(`IMAGE element ${index} is not a JPEG or PNG image`);
    try {
      const { data, info } = await sharp(image, { limitInputPixels: this.#maxInputPixels, failOn: "warning", autoOrient: true })
        .removeAlpha()
        .toColourspace("srgb")
        .resize(this.#width, this.#height, { fit: "fill", kernel: "linear" })
        .raw()
        .toBuffer({ resolveWithObject: true });
      if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels, not RGB`);
      return data;
    } catch (error) {
      throw new InvalidImage(`IMAGE element ${index} cannot be decoded: ${(error as Error).message}`);
    }
  }
}
