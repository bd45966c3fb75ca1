import type { ActivationRange } from "./qdq-quantizer";

/**
 * ONNX Runtime's `HistogramCollector.collect_absolute_value` and `compute_percentile`
 * (onnxruntime/python/tools/quantization/calibrate.py): a histogram of |x| whose bins keep their width and grow in
 * number when a later sample holds larger values; the percentile range cuts (100 - p) / 2 % off each side of the CDF.
 */
export class HistogramCollector {
  private counts: number[] = [];
  private edges: number[] = [];

  constructor(private readonly bins: number) {}

  collectAbsolute(data: Float32Array): void {
    const values = Float64Array.from(data, Math.abs);
    let low = Infinity;
    let high = -Infinity;
    for (const value of values) {
      if (value < low) low = value;
      if (value > high) high = value;
    }
    if (this.edges.length === 0) {
      // numpy.histogram(bins=n) over [min, max]; a zero-width range becomes [v - 0.5, v + 0.5].
      if (low === high) { low -= 0.5; high += 0.5; }
      const width = (high - low) / this.bins;
      this.edges = Array.from({ length: this.bins + 1 }, (_, i) => low + i * width);
      this.counts = new Array<number>(this.bins).fill(0);
    } else if (high > this.edges.at(-1)!) {
      const width = this.edges[1]! - this.edges[0]!;
      for (let edge = this.edges.at(-1)! + width; edge < high + width; edge += width) this.edges.push(edge);
      while (this.counts.length < this.edges.length - 1) this.counts.push(0);
    }
    const first = this.edges[0]!;
    const width = this.edges[1]! - first;
    const last = this.counts.length - 1;
    for (const value of values) {
      if (value < first || value > this.edges.at(-1)!) continue; // numpy drops values outside the edges
      this.counts[Math.min(last, Math.floor((value - first) / width))]!++;
    }
  }

  /** The asymmetric percentile range, clipped to the min and max seen (compute_percentile, symmetric=False). */
  percentileRange(percentile: number, seen: ActivationRange): ActivationRange {
    const total = this.counts.reduce((a, b) => a + b, 0);
    const cdf: number[] = [];
    let running = 0;
    for (const count of this.counts) cdf.push((running += count) / total);
    // numpy.searchsorted(cdf, v): the first index whose cdf >= v.
    const searchsorted = (v: number): number => { const i = cdf.findIndex((c) => c >= v); return i < 0 ? cdf.length : i; };
    const cut = (100 - percentile) / 200;
    const left = this.edges[searchsorted(cut)] ?? this.edges.at(-1)!;
    const right = this.edges[searchsorted(1 - cut)] ?? this.edges.at(-1)!;
    return { min: Math.max(-left, seen.min), max: Math.min(right, seen.max) };
  }
}
