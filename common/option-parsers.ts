import { InvalidArgumentError, Option } from "@commander-js/extra-typings";

/** Value parsers shared by the flags of the server and its tools (inference-perf, inference-tune). */

export function parseBoolean(value: string | undefined): boolean {
  if (value === undefined) return true;
  const v = value.toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  throw new InvalidArgumentError(`'${value}' is not a boolean (true/false)`);
}

export function parseInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`'${value}' must be an integer in [${min}, ${max}]`);
    return n;
  };
}

/** commander argument parser: an integer of at least `min`. */
export function integer(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`must be an integer >= ${min}`);
    return n;
  };
}

/** commander argument parser: a finite number above 0. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("must be a positive number");
  return n;
}

/** commander argument parser for a repeatable `--shape NAME:d1,d2` (dimensions without the batch dimension). */
export function shape(value: string, previous: Map<string, number[]> = new Map()): Map<string, number[]> {
  const match = /^(.+):(\d+(?:,\d+)*)$/.exec(value);
  if (match === null) throw new InvalidArgumentError("expected NAME:d1,d2,... (dimensions without the batch dimension)");
  return new Map(previous).set(match[1]!, match[2]!.split(",").map(Number));
}

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Triton's `--flag [bool]` switch. The flag is a type parameter so that the option's name (`--allow-http` ->
 * `allowHttp`) reaches the command's inferred option types, with the value a boolean.
 */
export function booleanFlag<const Flag extends string>(flag: Flag, description: string, defaultValue: boolean) {
  return new Option(`${flag} [bool]`, description).argParser(parseBoolean).default(defaultValue);
}
