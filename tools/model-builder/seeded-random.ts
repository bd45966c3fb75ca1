/**
 * A small deterministic PRNG (mulberry32: 32-bit state, period 2^32) for model weights. It uses only integer
 * operations and one exact division, so a seed yields the same numbers on every JavaScript engine and
 * platform, and a model file built from it is byte-identical everywhere. Not for anything security-related.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
    this.state = seed >>> 0;
  }

  /** The next value, uniform over the 32-bit unsigned integers. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** The next value, uniform in [0, 1). */
  nextFloat(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  /** `count` values drawn uniformly from [-bound, bound). */
  uniformArray(count: number, bound: number): Float32Array {
    const values = new Float32Array(count);
    for (let i = 0; i < count; i++) values[i] = (this.nextFloat() * 2 - 1) * bound;
    return values;
  }
}
