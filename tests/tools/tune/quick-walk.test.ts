import { describe, expect, it } from "vitest";
import { type Coordinate, coordinateKey, nextWalkMove, type ScoreOf, startWalk, type WalkSpace, type WalkState } from "../../../tools/tune/quick-walk";

/** Runs a walk to its end against a score function; returns what it measured, in order, and why it stopped. */
function walk(space: WalkSpace, start: Coordinate, score: (c: Coordinate) => number): { measured: string[]; reason: string } {
  const scores = new Map<string, number>();
  const scoreOf: ScoreOf = (c) => scores.get(coordinateKey(c));
  let state: WalkState = startWalk(space, start);
  for (let moves = 0; moves < 1000; moves++) {
    const move = nextWalkMove(space, state, scoreOf);
    if (move.kind === "done") return { measured: [...scores.keys()], reason: move.reason };
    if (move.kind === "measure") {
      expect(scores.has(coordinateKey(move.coordinate))).toBe(false);
      expect(space.isValid(move.coordinate)).toBe(true);
      scores.set(coordinateKey(move.coordinate), score(move.coordinate));
    } else {
      state = move.state;
    }
  }
  throw new Error("the walk did not end");
}

const grid = (sizes: number[], isValid: (c: Coordinate) => boolean = () => true): WalkSpace => ({ sizes, isValid });

/** A single peak: the score falls with the distance from `peak`. */
const peakAt = (peak: Coordinate) => (c: Coordinate): number => 100 - c.reduce((total, value, i) => total + (value - peak[i]!) ** 2, 0);

function best(measured: string[], score: (c: Coordinate) => number): string {
  return measured.reduce((a, b) => (score(b.split(",").map(Number)) > score(a.split(",").map(Number)) ? b : a));
}

describe("quick walk", () => {
  it("climbs to a single peak measuring a fraction of the grid", () => {
    const space = grid([8, 8, 8]);
    const score = peakAt([6, 5, 7]);
    const { measured } = walk(space, [0, 0, 0], score);
    expect(best(measured, score)).toBe("6,5,7");
    expect(measured.length).toBeLessThan(8 * 8 * 8 / 10);
  });

  it("measures home first, then neighbours until three are known, and only allowed ones", () => {
    const space = grid([5, 5], (c) => c[0]! + c[1]! <= 5);
    const score = peakAt([4, 1]);
    const { measured } = walk(space, [0, 0], score);
    expect(measured[0]).toBe("0,0");
    expect(measured).toContain("4,1");
    expect(measured.every((key) => key.split(",").map(Number).reduce((a, b) => a + b) <= 5)).toBe(true);
  });

  it("starts from the nearest allowed coordinate when the start is not allowed", () => {
    const space = grid([4, 4], (c) => c[0]! >= 2);
    expect(startWalk(space, [0, 3]).home).toEqual([2, 3]);
    expect(() => startWalk(grid([2], () => false), [0])).toThrow("no allowed coordinate");
  });

  it("stops where nothing scores differently, e.g. when everything failed", () => {
    const { measured, reason } = walk(grid([6, 6]), [2, 2], () => 0);
    expect(measured).toHaveLength(7); // home, two more to step from, then its four direct neighbours
    expect(reason).toMatch(/no direct neighbour does better/);
  });

  it("heads for the nearest miss while every point misses the constraints (negative scores)", () => {
    // Scores below 0 everywhere but at index 0 of the second dimension, less negative the nearer to it.
    const score = (c: Coordinate): number => (c[1] === 0 ? 10 : -c[1]! / (1 + c[1]!));
    const { measured } = walk(grid([3, 8]), [1, 7], score);
    expect(measured.some((key) => key.endsWith(",0"))).toBe(true);
  });

  it("ends on a plateau and on a dimension of one value", () => {
    const space = grid([1, 10]);
    const score = (c: Coordinate): number => Math.min(c[1]!, 4);
    const { measured } = walk(space, [0, 0], score);
    expect(measured.some((key) => score(key.split(",").map(Number)) === 4)).toBe(true);
  });
});
