import { InvalidArgumentError, Option } from "commander";

/** Value parsers shared by the server's flags. */

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

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function booleanFlag(flag: string, description: string, defaultValue: boolean): Option {
  return new Option(`${flag} [bool]`, description).argParser(parseBoolean).default(defaultValue);
}
