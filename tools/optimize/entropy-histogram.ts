import type { ActivationRange } from "./qdq-quantizer";

/**
 * ONNX Runtime's Entropy calibration (onnxruntime/python/tools/quantization/calibrate.py: `HistogramCollector.
 * collect_value`, `merge_histogram`, `get_entropy_threshold`; quant_utils.py `smooth_distribution`): a histogram of
 * the values over [-t, t] (t the largest |x| seen; a wider sample adds bins of the same width on both sides), then
 * the symmetric window around zero whose distribution, squeezed into `quantizedBins` bins and expanded back, loses
 * the least information (smallest KL divergence) against the window with the outliers folded into its end bins.
 */
export class EntropyHistogram {
  private counts: number[] = [];
  private threshold = 0;
  private min = Infinity;
  private max = -Infinity;

  constructor(private readonly bins: number, private readonly quantizedBins: number) {}

  /** numpy.histogram(values, n, range=(-t, t)): equal bins, the last one closed on the right; values outside dropped. */
  private static histogram(values: Float32Array, n: number, t: number): number[] {
    const counts = new Array<number>(n).fill(0);
    if (t === 0) {
      // numpy widens an empty range to [-0.5, 0.5]: every value (all zeros) lands in the middle bin.
      counts[Math.floor(n / 2)]! += values.length;
      return counts;
    }
    const width = (2 * t) / n;
    for (const value of values) {
      if (value < -t || value > t) continue;
      counts[Math.min(n - 1, Math.floor((value + t) / width))]!++;
    }
    return counts;
  }

  collect(values: Float32Array): void {
    let low = Infinity;
    let high = -Infinity;
    for (const value of values) {
      if (value < low) low = value;
      if (value > high) high = value;
    }
    const threshold = Math.max(Math.abs(low), Math.abs(high));
    this.min = Math.min(this.min, low);
    this.max = Math.max(this.max, high);
    if (this.counts.length === 0) {
      this.counts = EntropyHistogram.histogram(values, this.bins, threshold);
      this.threshold = threshold;
    } else if (threshold <= this.threshold) {
      EntropyHistogram.histogram(values, this.counts.length, this.threshold).forEach((c, i) => { this.counts[i]! += c; });
    } else if (this.threshold === 0) {
      const counts = EntropyHistogram.histogram(values, this.counts.length, threshold);
      this.counts = counts.map((c, i) => c + this.counts[i]!);
      this.threshold = threshold;
    } else {
      const stride = (2 * this.threshold) / this.counts.length;
      const half = Math.floor((threshold - this.threshold) / stride) + 1;
      const widened = half * stride + this.threshold;
      const counts = EntropyHistogram.histogram(values, this.counts.length + 2 * half, widened);
      this.counts.forEach((c, i) => { counts[half + i]! += c; });
      this.counts = counts;
      this.threshold = widened;
    }
  }

  /** The window with the smallest KL divergence, clipped to the values seen. */
  entropyRange(): ActivationRange {
    const hist = this.counts;
    const numBins = hist.length;
    const edge = (i: number): number => -this.threshold + (2 * this.threshold * i) / numBins;
    const zero = Math.floor(numBins / 2);
    const halfQuantized = Math.floor(this.quantizedBins / 2);
    // Prefix sums: the outliers left and right of each window in O(1). The search itself is O(bins^2), as in ONNX
    // Runtime: a later sample much wider than the first adds many bins of the first one's width.
    const prefix = [0];
    for (const count of hist) prefix.push(prefix.at(-1)! + count);
    let best = { kl: Infinity, range: { min: edge(0), max: edge(numBins) } };
    for (let i = halfQuantized; i <= zero; i++) {
      const start = zero - i;
      const end = Math.min(zero + i + 1, numBins);
      const sliced = hist.slice(start, end);
      const p = [...sliced];
      p[0]! += prefix[start]!;
      p[p.length - 1]! += prefix[numBins]! - prefix[end]!;
      const merged = Math.floor(sliced.length / this.quantizedBins);
      const quantized = Array.from({ length: this.quantizedBins }, (_, k) => sliced.slice(k * merged, k * merged + merged).reduce((a, b) => a + b, 0));
      quantized[this.quantizedBins - 1]! += sliced.slice(this.quantizedBins * merged).reduce((a, b) => a + b, 0);
      const q = new Array<number>(p.length).fill(0);
      for (let k = 0; k < this.quantizedBins; k++) {
        const from = k * merged;
        const norm = p.slice(from, from + merged).filter((v) => v !== 0).length;
        // ONNX Runtime's q is an int64 array: the spread counts are truncated.
        if (norm !== 0) for (let j = from; j < from + merged; j++) q[j] = Math.trunc(quantized[k]! / norm);
      }
      const kl = klDivergence(smooth(p), smooth(q));
      const range = { min: edge(start), max: edge(end) };
      if (kl < best.kl) best = { kl, range };
    }
    return { min: Math.max(best.range.min, this.min), max: Math.min(best.range.max, this.max) };
  }
}

/** quant_utils.py `smooth_distribution`: zeros become eps, taken evenly from the non-zero bins; undefined if all are 0. */
function smooth(p: readonly number[], eps = 0.0001): number[] | undefined {
  const zeros = p.filter((v) => v === 0).length;
  const nonZeros = p.length - zeros;
  if (nonZeros === 0) return undefined;
  const eps1 = (eps * zeros) / nonZeros;
  return p.map((v) => Math.fround(v === 0 ? eps : v - eps1));
}

/** scipy.stats.entropy(p, q): KL(p || q) of the normalized distributions; infinite when either is undefined. */
function klDivergence(p: readonly number[] | undefined, q: readonly number[] | undefined): number {
  if (p === undefined || q === undefined) return Infinity;
  const sp = p.reduce((a, b) => a + b, 0);
  const sq = q.reduce((a, b) => a + b, 0);
  let kl = 0;
  for (let i = 0; i < p.length; i++) {
    const pi = p[i]! / sp;
    if (pi > 0) kl += pi * Math.log(pi / (q[i]! / sq));
  }
  return kl;
}
