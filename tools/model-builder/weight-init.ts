import { type SeededRandom } from "./seeded-random";

/**
 * He (Kaiming) uniform initialization for a layer followed by ReLU: variance 2 / fanIn keeps the activations'
 * second moment roughly constant from layer to layer, so a deep untrained network neither explodes nor
 * collapses to zeros. Uniform rather than normal so that weights need no transcendental functions and stay
 * bit-identical across platforms.
 */
export function heUniformWeights(random: SeededRandom, fanIn: number, count: number): Float32Array {
  return random.uniformArray(count, Math.sqrt(6 / fanIn));
}

/** PyTorch's default for linear layers and biases: uniform in ±1/sqrt(fanIn). */
export function fanInUniformWeights(random: SeededRandom, fanIn: number, count: number): Float32Array {
  return random.uniformArray(count, 1 / Math.sqrt(fanIn));
}
