import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
import type { ModelConfigSpec } from "../model-config-text";
import { OnnxGraphBuilder } from "../onnx-graph-builder";
import { SeededRandom } from "../seeded-random";
import { fanInUniformWeights, heUniformWeights } from "../weight-init";

const IMAGE_CHANNELS = 3;
const IMAGE_SIZE = 224;
const CLASS_COUNT = 1000;
const STEM_CHANNELS = 64;
const BOTTLENECK_EXPANSION = 4;
const BATCH_NORM_EPSILON = 1e-5;
const LABELS_FILE_NAME = "labels.txt";
/** ResNet-50: four stages of bottleneck blocks; every stage after the first halves the resolution. */
const STAGES = [
  { blocks: 3, width: 64, stride: 1 },
  { blocks: 4, width: 128, stride: 2 },
  { blocks: 6, width: 256, stride: 2 },
  { blocks: 3, width: 512, stride: 2 },
] as const;
// The last BN of each residual branch starts small (as in "zero-init residual" training recipes): each
// block then adds only a little variance to its shortcut, so 16 blocks of untrained weights keep the
// activations finite and input-dependent instead of letting them grow block after block.
const RESIDUAL_BRANCH_GAMMA = 0.2;

interface ConvBnSpec {
  readonly convName: string;
  readonly bnName: string;
  readonly input: string;
  readonly inChannels: number;
  readonly outChannels: number;
  readonly kernelSize: number;
  readonly stride: number;
  readonly gamma: number;
}

/**
 * Adds ResNet layers to a graph, drawing weights from one seeded stream in graph order. The stream is the same at
 * either precision: FP16 weights are the FP32 ones rounded to the nearest half.
 */
class Resnet50GraphWriter {
  constructor(
    private readonly graph: OnnxGraphBuilder,
    private readonly random: SeededRandom,
    private readonly precision: Resnet50Precision,
  ) {}

  private weights(name: string, dims: readonly number[], values: Float32Array): string {
    return this.precision === "FP16" ? this.graph.addFloat16Initializer(name, dims, values) : this.graph.addInitializer(name, dims, values);
  }

  /** Conv (no bias, "same" padding) followed by inference-mode BatchNormalization; returns the BN output. */
  convBn(spec: ConvBnSpec): string {
    const { kernelSize, inChannels, outChannels } = spec;
    const fanIn = inChannels * kernelSize * kernelSize;
    const weight = this.weights(
      `${spec.convName}.weight`,
      [outChannels, inChannels, kernelSize, kernelSize],
      heUniformWeights(this.random, fanIn, outChannels * fanIn),
    );
    const pad = Math.floor(kernelSize / 2);
    this.graph.addNode({
      opType: "Conv",
      inputs: [spec.input, weight],
      outputs: [spec.convName],
      attributes: {
        kernel_shape: { kind: "INTS", value: [kernelSize, kernelSize] },
        strides: { kind: "INTS", value: [spec.stride, spec.stride] },
        pads: { kind: "INTS", value: [pad, pad, pad, pad] },
      },
    });
    const bnParameter = (suffix: string, value: number): string =>
      this.weights(`${spec.bnName}.${suffix}`, [outChannels], new Float32Array(outChannels).fill(value));
    this.graph.addNode({
      opType: "BatchNormalization",
      inputs: [
        spec.convName,
        bnParameter("weight", spec.gamma),
        bnParameter("bias", 0),
        bnParameter("running_mean", 0),
        bnParameter("running_var", 1),
      ],
      outputs: [spec.bnName],
      attributes: { epsilon: { kind: "FLOAT", value: BATCH_NORM_EPSILON } },
    });
    return spec.bnName;
  }

  relu(input: string, output: string): string {
    this.graph.addNode({ opType: "Relu", inputs: [input], outputs: [output] });
    return output;
  }

  /** Stem: 7x7/2 conv + BN + ReLU, then 3x3/2 max pooling (224 -> 56). */
  stem(input: string): string {
    const bn = this.convBn({
      convName: "conv1", bnName: "bn1", input, inChannels: IMAGE_CHANNELS, outChannels: STEM_CHANNELS,
      kernelSize: 7, stride: 2, gamma: 1,
    });
    const relu = this.relu(bn, "relu");
    this.graph.addNode({
      opType: "MaxPool",
      inputs: [relu],
      outputs: ["maxpool"],
      attributes: {
        kernel_shape: { kind: "INTS", value: [3, 3] },
        strides: { kind: "INTS", value: [2, 2] },
        pads: { kind: "INTS", value: [1, 1, 1, 1] },
      },
    });
    return "maxpool";
  }

  /**
   * A v1.5 bottleneck: 1x1 reduce, 3x3 (carrying the stride, unlike v1 which strides the first 1x1),
   * 1x1 expand; a 1x1 projection shortcut where the shape changes; then add and ReLU.
   */
  bottleneck(prefix: string, input: string, inChannels: number, width: number, stride: number): string {
    const outChannels = width * BOTTLENECK_EXPANSION;
    const reduce = this.relu(this.convBn({
      convName: `${prefix}.conv1`, bnName: `${prefix}.bn1`, input, inChannels, outChannels: width,
      kernelSize: 1, stride: 1, gamma: 1,
    }), `${prefix}.relu1`);
    const spatial = this.relu(this.convBn({
      convName: `${prefix}.conv2`, bnName: `${prefix}.bn2`, input: reduce, inChannels: width, outChannels: width,
      kernelSize: 3, stride, gamma: 1,
    }), `${prefix}.relu2`);
    const expand = this.convBn({
      convName: `${prefix}.conv3`, bnName: `${prefix}.bn3`, input: spatial, inChannels: width, outChannels,
      kernelSize: 1, stride: 1, gamma: RESIDUAL_BRANCH_GAMMA,
    });
    const shortcut = stride === 1 && inChannels === outChannels
      ? input
      : this.convBn({
        convName: `${prefix}.downsample.0`, bnName: `${prefix}.downsample.1`, input, inChannels, outChannels,
        kernelSize: 1, stride, gamma: 1,
      });
    this.graph.addNode({ opType: "Add", inputs: [expand, shortcut], outputs: [`${prefix}.add`] });
    return this.relu(`${prefix}.add`, `${prefix}.relu3`);
  }

  /** Global average pooling, flatten, and the fully connected classifier producing logits. */
  classifier(input: string, inFeatures: number, output: string): void {
    this.graph.addNode({ opType: "GlobalAveragePool", inputs: [input], outputs: ["avgpool"] });
    this.graph.addNode({
      opType: "Flatten", inputs: ["avgpool"], outputs: ["flatten"], attributes: { axis: { kind: "INT", value: 1 } },
    });
    const weight = this.weights("fc.weight", [CLASS_COUNT, inFeatures],
      fanInUniformWeights(this.random, inFeatures, CLASS_COUNT * inFeatures));
    const bias = this.weights("fc.bias", [CLASS_COUNT],
      fanInUniformWeights(this.random, inFeatures, CLASS_COUNT));
    this.graph.addNode({
      opType: "Gemm",
      inputs: ["flatten", weight, bias],
      outputs: [output],
      name: "fc",
      attributes: { transB: { kind: "INT", value: 1 } },
    });
  }
}

/** One generated label per class (`CLASS_0000` ...): we may not ship ImageNet's label list. */
function labelsText(): string {
  return Array.from({ length: CLASS_COUNT }, (_, index) => `CLASS_${String(index).padStart(4, "0")}\n`).join("");
}

export type Resnet50Precision = "FP32" | "FP16";

/** How one resnet50 model of a repository is configured; the defaults are the CPU example's. */
export interface Resnet50Variant {
  readonly name?: string;
  /** Weights, input and output in FP32 (default) or FP16. */
  readonly precision?: Resnet50Precision;
  readonly maxBatchSize?: number;
  /** Default: the dynamic batcher with Triton's defaults. */
  readonly dynamicBatching?: boolean;
  readonly instanceGroups?: ModelConfigSpec["instanceGroups"];
}

/**
 * `resnet50`: the ResNet-50 v1.5 architecture (25.6 M parameters, about 4 GFLOPs per image) with seeded
 * untrained weights. Its outputs are meaningless logits, but its compute and memory profile is a real
 * ResNet-50's, which is what the serving benchmarks need. NCHW `input` [N,3,224,224] -> `output` [N,1000], in FP32
 * unless the variant asks for FP16 (weights, input and output).
 */
export function buildResnet50Model(seed: number, variant: Resnet50Variant = {}): ExampleModel {
  const name = variant.name ?? "resnet50";
  const precision = variant.precision ?? "FP32";
  const elementType = precision === "FP16" ? "FLOAT16" : "FLOAT";
  const dataType = precision === "FP16" ? "TYPE_FP16" : "TYPE_FP32";
  const graph = new OnnxGraphBuilder(name);
  const writer = new Resnet50GraphWriter(graph, new SeededRandom(seed), precision);
  const input = graph.addInput("input", elementType, ["N", IMAGE_CHANNELS, IMAGE_SIZE, IMAGE_SIZE]);

  let activation = writer.stem(input);
  let channels = STEM_CHANNELS;
  STAGES.forEach((stage, stageIndex) => {
    for (let block = 0; block < stage.blocks; block++) {
      const stride = block === 0 ? stage.stride : 1;
      activation = writer.bottleneck(`layer${stageIndex + 1}.${block}`, activation, channels, stage.width, stride);
      channels = stage.width * BOTTLENECK_EXPANSION;
    }
  });
  writer.classifier(activation, channels, "output");
  graph.addOutput("output", elementType, ["N", CLASS_COUNT]);

  return exampleModel(
    {
      name,
      runtime: { platform: "onnxruntime_onnx" },
      maxBatchSize: variant.maxBatchSize ?? 8,
      inputs: [{
        name: "input", dataType, format: "FORMAT_NCHW", dims: [IMAGE_CHANNELS, IMAGE_SIZE, IMAGE_SIZE],
      }],
      outputs: [{ name: "output", dataType, dims: [CLASS_COUNT], labelFilename: LABELS_FILE_NAME }],
      ...((variant.dynamicBatching ?? true) ? { dynamicBatching: {} } : {}),
      instanceGroups: variant.instanceGroups ?? [{ count: 1, kind: "KIND_CPU" }],
      // On a GPU the first run picks kernels (cuDNN search, TensorRT engine build): done before the model is ready.
      warmup: { name: "zero_image", batchSize: 1 },
    },
    { [ONNX_MODEL_FILE_NAME]: graph.toModelBytes() },
    [{ relativePath: LABELS_FILE_NAME, contents: labelsText() }],
  );
}

/** Largest batch of the GPU variants: in-process WebGPU on an H100 peaks at batch 32 (898 img/s; 716 at 8). */
const GPU_MAX_BATCH_SIZE = 32;

/**
 * The resnet50 variants the GPU checks and benchmarks serve (`--gpu` repositories): FP32 with and without the
 * dynamic batcher, and FP16. One KIND_GPU instance each, no accelerator named: CUDA where installed, else WebGPU.
 */
export function* buildGpuResnet50Models(seed: number): Generator<ExampleModel> {
  const gpu = { maxBatchSize: GPU_MAX_BATCH_SIZE, instanceGroups: [{ count: 1, kind: "KIND_GPU" as const }] };
  yield buildResnet50Model(seed, { ...gpu, name: "resnet50_gpu" });
  yield buildResnet50Model(seed, { ...gpu, name: "resnet50_gpu_unbatched", dynamicBatching: false });
  yield buildResnet50Model(seed, { ...gpu, name: "resnet50_fp16_gpu", precision: "FP16" });
}
