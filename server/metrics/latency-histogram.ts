import { labelPair, sampleValue } from "./exposition-text";

/** Upper bounds, in seconds, of the latency histograms: 100 µs to 30 s in 1-2.5-5 steps (alert thresholds sit on bounds). */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

const LE_LABELS = [...LATENCY_BUCKETS_SECONDS.map(String), "+Inf"].map((bound) => labelPair("le", bound));

/**
 * One series of a latency histogram with {@link LATENCY_BUCKETS_SECONDS}: observing adds to one bucket, the sum and
 * the count, with no allocation; the cumulative bucket lines are written at scrape time.
 */
export class LatencyHistogram {
  /** Observations per bucket, not cumulative; the last one counts those above every bound. */
  readonly #buckets = new Float64Array(LATENCY_BUCKETS_SECONDS.length + 1);
  #sum = 0;
  #count = 0;

  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS_SECONDS.length && seconds > LATENCY_BUCKETS_SECONDS[bucket]!) bucket++;
    this.#buckets[bucket]! += 1;
    this.#sum += seconds;
    this.#count += 1;
  }

  /** The series' `_bucket`, `_sum` and `_count` lines; `labels` are its own label pairs, joined. */
  samples(name: string, labels: string): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    for (let bucket = 0; bucket < this.#buckets.length; bucket++) {
      cumulative += this.#buckets[bucket]!;
      lines.push(`${name}_bucket{${LE_LABELS[bucket]!},${labels}} ${cumulative}`);
    }
    lines.push(`${name}_sum{${labels}} ${sampleValue(this.#sum)}`, `${name}_count{${labels}} ${this.#count}`);
    return lines;
  }
}
