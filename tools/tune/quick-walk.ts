/**
 * Quick search: the hill-climbing walk of Triton Model Analyzer's quick mode, over the index coordinates of a search
 * space. Around the current coordinate ("home") it measures neighbours within a radius until enough are known,
 * then steps towards where the measured neighbours did better than home, and stops when the step leads nowhere new.
 * Pure: the caller measures what {@link nextWalkMove} asks for and calls it again.
 */

export type Coordinate = readonly number[];

/** The grid the walk moves on: values per dimension, and which coordinates are allowed. */
export interface WalkSpace {
  readonly sizes: readonly number[];
  isValid(coordinate: Coordinate): boolean;
}

export interface WalkSettings {
  /** Neighbours are the coordinates within this Euclidean distance of home. */
  readonly radius: number;
  /** Measured coordinates a neighbourhood needs (home included) before the walk steps. */
  readonly minInitialized: number;
  /** Length of a step, in index units, before rounding to the grid. */
  readonly stepMagnitude: number;
}

/** Model Analyzer's quick-search constants. */
const MODEL_ANALYZER_WALK: WalkSettings = { radius: 2, minInitialized: 3, stepMagnitude: 2 };

export interface WalkState {
  readonly home: Coordinate;
  /** Every coordinate the walk stood on, as keys; returning to one ends the climb. */
  readonly homes: readonly string[];
  /**
   * After the climb: steps of one index from the best coordinate, while a direct neighbour does better (the
   * climb's steps of two can straddle the peak).
   */
  readonly refining: boolean;
}

/** Measured objective of a coordinate (higher is better, negative allowed), or undefined when not measured. */
export type ScoreOf = (coordinate: Coordinate) => number | undefined;

export type WalkMove =
  | { readonly kind: "measure"; readonly coordinate: Coordinate }
  | { readonly kind: "step"; readonly state: WalkState }
  | { readonly kind: "done"; readonly reason: string };

export function coordinateKey(coordinate: Coordinate): string {
  return coordinate.join(",");
}

function distance(a: Coordinate, b: Coordinate): number {
  return Math.sqrt(a.reduce((total, value, i) => total + (value - b[i]!) ** 2, 0));
}

/** Every coordinate inside the grid's bounds within `radius` of `center` (itself included) that is allowed, in lexicographic order. */
function coordinatesNear(space: WalkSpace, center: Coordinate, radius: number): Coordinate[] {
  const found: Coordinate[] = [];
  const reach = Math.floor(radius);
  const visit = (prefix: number[]): void => {
    const dimension = prefix.length;
    if (dimension === space.sizes.length) {
      if (distance(prefix, center) <= radius && space.isValid(prefix)) found.push(prefix);
      return;
    }
    const low = Math.max(0, center[dimension]! - reach);
    const high = Math.min(space.sizes[dimension]! - 1, center[dimension]! + reach);
    for (let index = low; index <= high; index++) visit([...prefix, index]);
  };
  visit([]);
  return found;
}

/** The allowed coordinate nearest `target` (the first in lexicographic order among equals), or undefined if none is allowed. */
function nearestValid(space: WalkSpace, target: Coordinate): Coordinate | undefined {
  if (space.isValid(target)) return target;
  const largest = Math.max(...space.sizes);
  for (let radius = 1; radius <= largest * Math.sqrt(space.sizes.length); radius++) {
    const near = coordinatesNear(space, target, radius);
    if (near.length > 0) return near.reduce((best, c) => (distance(c, target) < distance(best, target) ? c : best));
  }
  return undefined;
}

/** Where a walk begins: `start`, or the allowed coordinate nearest it. Throws when the space allows none. */
export function startWalk(space: WalkSpace, start: Coordinate): WalkState {
  const home = nearestValid(space, start);
  if (home === undefined) throw new RangeError("the search space has no allowed coordinate");
  return { home, homes: [coordinateKey(home)], refining: false };
}

/**
 * Model Analyzer's rule for which neighbour to measure next: the one whose values are, in the most dimensions, not
 * yet covered by a measured neighbour (so few measurements span every dimension); ties go to the nearest to home.
 */
function coordinateToInitialize(neighbours: readonly Coordinate[], measured: readonly Coordinate[], home: Coordinate): Coordinate | undefined {
  const covered = home.map((_, dimension) => new Set(measured.map((c) => c[dimension])));
  let best: Coordinate | undefined;
  let bestUncovered = -1;
  for (const candidate of neighbours) {
    if (measured.includes(candidate)) continue;
    const uncovered = candidate.filter((value, dimension) => !covered[dimension]!.has(value)).length;
    if (uncovered > bestUncovered || (uncovered === bestUncovered && best !== undefined && distance(candidate, home) < distance(best, home))) {
      best = candidate;
      bestUncovered = uncovered;
    }
  }
  return best;
}

/**
 * The direction to step: the measured neighbours' offsets from home, each weighted by how much better (or worse,
 * pulling away) it scored than home relative to the largest score around. Zero when nothing differs.
 */
function stepDirection(measured: readonly Coordinate[], home: Coordinate, scoreOf: ScoreOf): number[] {
  const homeScore = scoreOf(home) ?? 0;
  const scale = Math.max(Math.abs(homeScore), ...measured.map((c) => Math.abs(scoreOf(c) ?? 0)));
  const direction = home.map(() => 0);
  if (scale === 0) return direction;
  for (const c of measured) {
    const gain = ((scoreOf(c) ?? 0) - homeScore) / scale;
    c.forEach((value, dimension) => (direction[dimension]! += gain * (value - home[dimension]!)));
  }
  return direction;
}

/** Ends the climb: continues from the best measured coordinate around home, refining one index at a time. */
function refineFrom(state: WalkState, measured: readonly Coordinate[], scoreOf: ScoreOf): WalkMove {
  const best = measured.reduce((a, b) => ((scoreOf(b) ?? 0) > (scoreOf(a) ?? 0) ? b : a), state.home);
  return { kind: "step", state: { home: best, homes: state.homes, refining: true } };
}

function refinementMove(space: WalkSpace, state: WalkState, scoreOf: ScoreOf): WalkMove {
  const home = state.home;
  const adjacent = coordinatesNear(space, home, 1).filter((c) => coordinateKey(c) !== coordinateKey(home));
  const unmeasured = adjacent.find((c) => scoreOf(c) === undefined);
  if (unmeasured !== undefined) return { kind: "measure", coordinate: unmeasured };
  const better = adjacent.reduce<Coordinate | undefined>((a, c) => ((scoreOf(c) ?? 0) > (scoreOf(a ?? home) ?? 0) ? c : a), undefined);
  if (better === undefined) return { kind: "done", reason: "no direct neighbour does better" };
  return { kind: "step", state: { ...state, home: better } };
}

/**
 * The walk's next move from `state`: a coordinate to measure (home first, then neighbours until
 * `minInitialized` are known), a step to a new home, or done. The climb ends when no direction is better or the
 * step leads back to a coordinate it stood on; then the walk refines around the best coordinate, one index at a
 * time, until no direct neighbour does better. Every call either measures something new or moves to a better
 * (or, climbing, a new) coordinate, so the walk ends on any finite grid.
 */
export function nextWalkMove(space: WalkSpace, state: WalkState, scoreOf: ScoreOf, settings: WalkSettings = MODEL_ANALYZER_WALK): WalkMove {
  const home = state.home;
  if (scoreOf(home) === undefined) return { kind: "measure", coordinate: home };
  if (state.refining) return refinementMove(space, state, scoreOf);
  const neighbours = coordinatesNear(space, home, settings.radius);
  const measured = neighbours.filter((c) => scoreOf(c) !== undefined);
  if (measured.length < settings.minInitialized) {
    const next = coordinateToInitialize(neighbours, measured, home);
    if (next !== undefined) return { kind: "measure", coordinate: next };
  }
  const direction = stepDirection(measured, home, scoreOf);
  const length = Math.sqrt(direction.reduce((total, value) => total + value * value, 0));
  if (length === 0) return refineFrom(state, measured, scoreOf);
  const target = home.map((value, dimension) => {
    const moved = value + Math.round((direction[dimension]! / length) * settings.stepMagnitude);
    return Math.min(space.sizes[dimension]! - 1, Math.max(0, moved));
  });
  const next = nearestValid(space, target);
  if (next === undefined || coordinateKey(next) === coordinateKey(home) || state.homes.includes(coordinateKey(next))) {
    return refineFrom(state, measured, scoreOf);
  }
  return { kind: "step", state: { home: next, homes: [...state.homes, coordinateKey(next)], refining: false } };
}
