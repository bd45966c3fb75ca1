import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
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

/** Adds ResNet layers to a graph, drawing weights from one seeded stream in graph order. */
class Resnet50GraphWriter {
  constructor(
    private readonly graph: OnnxGraphBuilder,
    private readonly random: SeededRandom,
  ) {}

  /** Conv (no bias, "same" padding) followed by inference-mode BatchNormalization; returns the BN output. */
  convBn(spec: ConvBnSpec): string {
    const { kernelSize, inChannels, outChannels } = spec;
    const fanIn = inChannels * kernelSize * kernelSize;
    const weight = this.graph.addInitializer(
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
      this.graph.addInitializer(`${spec.bnName}.${suffix}`, [outChannels], new Float32Array(outChannels).fill(value));
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
    const weight = this.graph.addInitializer("fc.weight", [CLASS_COUNT, inFeatures],
      fanInUniformWeights(this.random, inFeatures, CLASS_COUNT * inFeatures));
    const bias = this.graph.addInitializer("fc.bias", [CLASS_COUNT],
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

/**
 * `resnet50`: the ResNet-50 v1.5 architecture (25.6 M parameters, about 4 GFLOPs per image) with seeded
 * untrained weights. Its outputs are meaningless logits, but its compute and memory profile is a real
 * ResNet-50's, which is what the serving benchmarks need. FP32, NCHW `input` [N,3,224,224] -> `output` [N,1000].
 */
export function buildResnet50Model(seed: number): ExampleModel {
  const graph = new OnnxGraphBuilder("resnet50");
  const writer = new Resnet50GraphWriter(graph, new SeededRandom(seed));
  const input = graph.addInput("input", "FLOAT", ["N", IMAGE_CHANNELS, IMAGE_SIZE, IMAGE_SIZE]);

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
  graph.addOutput("output", "FLOAT", ["N", CLASS_COUNT]);

  return exampleModel(
    {
      name: "resnet50",
      runtime: { platform: "onnxruntime_onnx" },
      maxBatchSize: 8,
      inputs: [{
        name: "input", dataType: "TYPE_FP32", format: "FORMAT_NCHW", dims: [IMAGE_CHANNELS, IMAGE_SIZE, IMAGE_SIZE],
      }],
      outputs: [{ name: "output", dataType: "TYPE_FP32", dims: [CLASS_COUNT], labelFilename: LABELS_FILE_NAME }],
      dynamicBatching: {},
      instanceGroups: [{ count: 1, kind: "KIND_CPU" }],
      // On a GPU the first run picks kernels (cuDNN search, TensorRT engine build): done before the model is ready.
      warmup: { name: "zero_image", batchSize: 1 },
    },
    { [ONNX_MODEL_FILE_NAME]: graph.toModelBytes() },
    [{ relativePath: LABELS_FILE_NAME, contents: labelsText() }],
  );
}
