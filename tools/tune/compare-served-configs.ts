import type { InferInput } from "../../client/index";
import { type ComparisonResult, type ComparisonSide, measureThroughput, runAbComparison } from "../perf/index";
import type { CandidateServer } from "./candidate-server";

/** Two configurations of one model measured against each other at the same load. */
export interface ServedConfigComparison {
  /** Serves one configuration on a server of its own. */
  readonly start: (configText: string) => Promise<CandidateServer>;
  readonly a: { readonly label: string; readonly configText: string };
  readonly b: { readonly label: string; readonly configText: string };
  /** The request both sides send, once both serve; given B's server for when it depends on what B serves. */
  readonly inputs: (b: CandidateServer) => readonly InferInput[] | Promise<readonly InferInput[]>;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** What {@link runAbComparison} reports and how many rounds it alternates. */
  readonly name: string;
  readonly setting: string;
  readonly rounds: number;
  readonly onRound: (round: number, measured: ComparisonResult["rounds"][number]) => void;
}

/**
 * Starts A then B, each on its own server, and alternates their throughput measurements for the rounds; each
 * side's span opens and closes on a completion, so batches count whole. Both servers are stopped after.
 */
export async function compareServedConfigs(comparison: ServedConfigComparison): Promise<ComparisonResult> {
  const { concurrency, warmupMs, durationMs } = comparison;
  const servers: CandidateServer[] = [];
  try {
    for (const side of [comparison.a, comparison.b]) servers.push(await comparison.start(side.configText));
    const [a, b] = servers as [CandidateServer, CandidateServer];
    const inputs = await comparison.inputs(b);
    const side = (label: string, server: CandidateServer): ComparisonSide => {
      // Encoded once for every round: the request does not change between them.
      const send = server.sender(inputs);
      return { label, measure: () => measureThroughput(send, { concurrency, warmupMs, durationMs }) };
    };
    return await runAbComparison(comparison.name, comparison.setting, side(comparison.a.label, a), side(comparison.b.label, b), comparison.rounds, comparison.onRound);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
