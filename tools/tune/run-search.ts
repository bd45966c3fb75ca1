import { bruteGrid } from "./brute-grid";
import { type Coordinate, nextWalkMove, startWalk, type WalkSpace, type WalkState } from "./quick-walk";
import { dimensionSizes, isValidCoordinate, nearestCoordinate, type SearchSpace, settingsAt } from "./search-space";
import { describeSettings, settingsKey, type TunedSettings } from "./tuned-settings";

export type SearchMode = "brute" | "quick";

export interface SearchRequest {
  readonly mode: SearchMode;
  readonly spaces: readonly SearchSpace[];
  /** Where each quick walk begins (the starting configuration, or the nearest coordinate to it). */
  readonly start: TunedSettings;
  /** Most candidates measured in all, those already in `scores` included. */
  readonly maxCandidates: number;
}

/**
 * Measures one candidate and returns its objective: the highest throughput among its measurements that meet the
 * constraints, 0 when none does or it failed.
 */
export type EvaluateCandidate = (settings: TunedSettings) => Promise<number>;

export interface SearchOutcome {
  /** True when `maxCandidates` cut the search short. */
  readonly truncated: boolean;
  /** One line per space: how its search ended. */
  readonly notes: readonly string[];
}

class CandidateBudgetSpent extends Error {}

function walkSpaceOf(space: SearchSpace): WalkSpace {
  return { sizes: dimensionSizes(space), isValid: (coordinate) => isValidCoordinate(space, coordinate) };
}

/**
 * Runs the search: brute measures every grid point of every space; quick walks each space (Model Analyzer's
 * hill climbing) from the starting configuration. `scores` holds the objective per settings key: candidates
 * measured before (the starting configuration) are not measured again, and settings that behave the same share
 * one measurement. Stops at `maxCandidates`.
 */
export async function runSearch(request: SearchRequest, evaluate: EvaluateCandidate, scores: Map<string, number>): Promise<SearchOutcome> {
  const measure = async (settings: TunedSettings): Promise<number> => {
    const key = settingsKey(settings);
    const known = scores.get(key);
    if (known !== undefined) return known;
    if (scores.size >= request.maxCandidates) throw new CandidateBudgetSpent();
    const score = await evaluate(settings);
    scores.set(key, score);
    return score;
  };
  const notes: string[] = [];
  try {
    for (const space of request.spaces) {
      const device = space.device.kind === "KIND_GPU" ? `GPU/${space.device.accelerator}` : "CPU";
      if (request.mode === "brute") {
        const grid = bruteGrid(space);
        for (const coordinate of grid) await measure(settingsAt(space, coordinate));
        notes.push(`brute search on ${device}: ${grid.length} grid points`);
        continue;
      }
      const walkSpace = walkSpaceOf(space);
      const scoreOf = (coordinate: Coordinate): number | undefined => scores.get(settingsKey(settingsAt(space, coordinate)));
      let state: WalkState = startWalk(walkSpace, nearestCoordinate(space, request.start));
      for (;;) {
        const move = nextWalkMove(walkSpace, state, scoreOf);
        if (move.kind === "measure") await measure(settingsAt(space, move.coordinate));
        else if (move.kind === "step") state = move.state;
        else {
          notes.push(`quick search on ${device} ended at ${describeSettings(settingsAt(space, state.home))}: ${move.reason}`);
          break;
        }
      }
    }
  } catch (error) {
    if (!(error instanceof CandidateBudgetSpent)) throw error;
    notes.push(`stopped after ${scores.size} candidates (--max-candidates)`);
    return { truncated: true, notes };
  }
  return { truncated: false, notes };
}
