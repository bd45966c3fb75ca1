/** perf_analyzer's `start:end:step` load range (`--concurrency-range`, `--request-rate-range`). */
export interface LoadRange {
  readonly start: number;
  /** 0 for concurrency means "keep growing until --latency-threshold is crossed". */
  readonly end: number;
  readonly step: number;
}

/**
 * Parses `start`, `start:end` or `start:end:step` (step defaults to 1, end to start). Concurrency values are
 * positive integers (end may be 0); request rates are positive numbers. Throws a `RangeError` saying what is wrong.
 */
export function parseLoadRange(text: string, kind: "concurrency" | "request-rate"): LoadRange {
  const parts = text.split(":");
  if (parts.length > 3 || parts.some((part) => part.trim() === "")) {
    throw new RangeError(`'${text}' is not start[:end[:step]]`);
  }
  const values = parts.map((part) => Number(part));
  const [start, end = start, step = 1] = values as [number, number?, number?];
  const valid = (value: number, allowZero: boolean): boolean =>
    Number.isFinite(value) && (kind === "request-rate" || Number.isInteger(value)) && (value > 0 || (allowZero && value === 0));
  const what = kind === "concurrency" ? "a positive integer" : "a positive number";
  if (!valid(start, false)) throw new RangeError(`start of '${text}' must be ${what}`);
  if (!valid(end, kind === "concurrency")) throw new RangeError(`end of '${text}' must be ${what}${kind === "concurrency" ? " (or 0)" : ""}`);
  if (!valid(step, false)) throw new RangeError(`step of '${text}' must be ${what}`);
  if (end !== 0 && end < start) throw new RangeError(`end of '${text}' is below its start`);
  return { start, end, step };
}

/** The load levels of a range in order; endless when `end` is 0 (the caller stops on its latency threshold). */
export function* loadLevels(range: LoadRange): Generator<number, void, undefined> {
  for (let index = 0; ; index++) {
    // Multiplying instead of accumulating keeps 0.1-steps from drifting (0.30000000000000004).
    const level = Number((range.start + index * range.step).toFixed(9));
    if (range.end !== 0 && level > range.end) return;
    yield level;
  }
}
