import type { Coordinate } from "./quick-walk";
import { dimensionSizes, isValidCoordinate, type SearchSpace, settingsAt } from "./search-space";
import { settingsKey } from "./tuned-settings";

/**
 * Brute search: every coordinate of the space (the cross product of its dimensions, first dimension slowest) that
 * passes the constraint filter, once per distinct behaviour (settings that measure the same, such as every queue
 * delay at max batch size 1, appear once).
 */
export function bruteGrid(space: SearchSpace): Coordinate[] {
  const sizes = dimensionSizes(space);
  const seen = new Set<string>();
  const grid: Coordinate[] = [];
  const visit = (prefix: number[]): void => {
    if (prefix.length === sizes.length) {
      if (!isValidCoordinate(space, prefix)) return;
      const key = settingsKey(settingsAt(space, prefix));
      if (seen.has(key)) return;
      seen.add(key);
      grid.push(prefix);
      return;
    }
    for (let index = 0; index < sizes[prefix.length]!; index++) visit([...prefix, index]);
  };
  visit([]);
  return grid;
}
