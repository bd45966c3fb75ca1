/**
 * The arithmetic of ONNX Runtime's static quantization, as its Python source defines it
 * (onnxruntime/python/tools/quantization/quant_utils.py: `get_qmin_qmax_for_qType`, `compute_scale_zp`,
 * `quantize_nparray`; base_quantizer.py: `quantize_bias_static_impl`). numpy's `round` rounds half to even,
 * and so does `QuantizeLinear` in ONNX Runtime; this module does the same, so that values quantized here match
 * the ones ONNX Runtime computes from the same scale.
 */

export type QuantType = "uint8" | "int8";

export interface QuantParams {
  /** float32 value of one quantization step. */
  readonly scale: number;
  readonly zeroPoint: number;
}

/** Round half to even, as numpy.round and std::nearbyint under the default rounding mode. */
export function roundHalfToEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The integer range of a type: symmetric INT8 is [-127, 127] so that zero sits in the middle (quant_utils). */
export function quantRange(type: QuantType, symmetric: boolean): { readonly qmin: number; readonly qmax: number } {
  if (type === "uint8") return { qmin: 0, qmax: 255 };
  return symmetric ? { qmin: -127, qmax: 127 } : { qmin: -128, qmax: 127 };
}

/**
 * Scale and zero point for the real range [rmin, rmax]: the range is first widened to hold 0 (so that zero is
 * exact, which padding and ReLU need); symmetric makes it [-absmax, absmax]. A zero-width range gets scale 1.
 */
export function computeScaleZeroPoint(rmin: number, rmax: number, type: QuantType, symmetric: boolean): QuantParams {
  const { qmin, qmax } = quantRange(type, symmetric);
  let low = Math.min(rmin, 0);
  let high = Math.max(rmax, 0);
  if (symmetric) {
    const absmax = Math.max(Math.abs(low), Math.abs(high));
    low = -absmax;
    high = absmax;
  }
  // float64 as numpy does, then the scale is stored as float32.
  const scale = (high - low) / (qmax - qmin);
  const FLOAT32_TINY = 1.1754943508222875e-38;
  if (!(scale >= FLOAT32_TINY)) return { scale: 1, zeroPoint: 0 };
  const zeroPoint = symmetric ? roundHalfToEven((qmax + qmin) / 2) : roundHalfToEven(qmin - low / scale);
  return { scale: Math.fround(scale), zeroPoint };
}

/** q = clip(round(x / scale) + zeroPoint, qmin, qmax), x / scale in float32 as numpy computes it. */
export function quantizeValue(value: number, params: QuantParams, qmin: number, qmax: number): number {
  const q = roundHalfToEven(Math.fround(value / params.scale)) + params.zeroPoint;
  return Math.min(qmax, Math.max(qmin, q));
}

/** What DequantizeLinear gives back for a quantized value: (q - zeroPoint) * scale in float32. */
export function dequantizeValue(q: number, params: QuantParams): number {
  return Math.fround((q - params.zeroPoint) * params.scale);
}

/** Quantize then dequantize: the value a QDQ pair lets through. */
export function fakeQuantize(value: number, params: QuantParams, type: QuantType): number {
  const { qmin, qmax } = quantRange(type, false);
  return dequantizeValue(quantizeValue(value, params, qmin, qmax), params);
}

export interface PerChannelWeights {
  readonly quantized: Int8Array;
  /** One scale per channel along the axis. */
  readonly scales: Float32Array;
}

/**
 * Symmetric INT8 per-channel weight quantization along `axis` (quant_utils `quantize_data` per channel, as
 * `quantize_weight_tensor_per_channel` calls it): each channel's scale is its absmax / 127, zero point 0.
 */
export function quantizeWeightsPerChannel(values: Float32Array, dims: readonly number[], axis: number): PerChannelWeights {
  const channels = dims[axis] ?? 1;
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const mins = new Float64Array(channels).fill(Infinity);
  const maxs = new Float64Array(channels).fill(-Infinity);
  const channelOf = (index: number): number => Math.floor(index / inner) % channels;
  for (let i = 0; i < values.length; i++) {
    const c = channelOf(i);
    const v = values[i]!;
    if (v < mins[c]!) mins[c] = v;
    if (v > maxs[c]!) maxs[c] = v;
  }
  const params = Array.from({ length: channels }, (_, c) => computeScaleZeroPoint(mins[c]!, maxs[c]!, "int8", true));
  const quantized = new Int8Array(values.length);
  const { qmin, qmax } = quantRange("int8", true);
  for (let i = 0; i < values.length; i++) quantized[i] = quantizeValue(values[i]!, params[channelOf(i)]!, qmin, qmax);
  return { quantized, scales: Float32Array.from(params, (p) => p.scale) };
}

/** Symmetric INT8 per-tensor weights (the per-channel case with one channel). */
export function quantizeWeightsPerTensor(values: Float32Array): PerChannelWeights {
  return quantizeWeightsPerChannel(values, [1, values.length], 0);
}

/**
 * INT32 bias with scale = input scale x weight scale (per channel) and zero point 0, so that the integer
 * accumulator of the convolution adds it directly (base_quantizer.py `quantize_bias_static_impl`).
 */
export function quantizeBias(bias: Float32Array, inputScale: number, weightScales: Float32Array): { quantized: Int32Array; scales: Float32Array } {
  const scales = new Float32Array(bias.length);
  const quantized = new Int32Array(bias.length);
  for (let c = 0; c < bias.length; c++) {
    const weightScale = weightScales.length === 1 ? weightScales[0]! : weightScales[c]!;
    const scale = Math.fround(inputScale * weightScale);
    scales[c] = scale === 0 ? 1 : scale;
    const q = roundHalfToEven(bias[c]! / scales[c]!);
    quantized[c] = Math.min(2147483647, Math.max(-2147483648, q));
  }
  return { quantized, scales };
}
