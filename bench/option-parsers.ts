import { InvalidArgumentError } from "@commander-js/extra-typings";

/** Value parsers shared by the flags of `npm run bench` and `npm run stress`. */

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

export function positiveIntegerList(value: string): number[] {
  return value.split(",").map((part) => positiveInteger(part.trim()));
}

/**
 * A parser of a comma-separated list of names out of `allowed`, naming every unknown one in its error. Empty
 * entries are dropped with `skipEmpty` (so an empty list selects nothing), else they count as unknown names.
 */
export function knownList<T extends string>(allowed: readonly T[], noun: string, { skipEmpty }: { skipEmpty: boolean }) {
  return (value: string): T[] => {
    const names = value.split(",").map((part) => part.trim()).filter((part) => !skipEmpty || part !== "");
    const unknown = names.filter((name) => !(allowed as readonly string[]).includes(name));
    if (unknown.length > 0) throw new InvalidArgumentError(`unknown ${noun} ${unknown.join(", ")} (${allowed.join(", ")})`);
    return names as T[];
  };
}
