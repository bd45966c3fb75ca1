import type { RequestTimes } from "./request-times";

/** What one response of a decoupled request was, as Triton's response_stats count it. */
export type ResponseOutcome = "success" | "fail" | "empty" | "cancel";

/** Where a response's durations go (the model version's statistics). */
export interface ResponseStatsRecorder {
  recordResponse(index: number, outcome: ResponseOutcome, inferNs: number, outputNs: number, totalNs: number): void;
}

/**
 * Times each response of one decoupled request as Triton's backends report them
 * (TRITONBACKEND_ModelInstanceReportResponseStatistics): a response starts where the previous one ended (the first
 * where the execution started), its output starts when its outputs reach the core, and it ends once handed to the
 * frontend. Responses are keyed by their index in the request ("0", "1", ...).
 */
export class ResponseTiming {
  readonly #times: RequestTimes;
  readonly #recorder: ResponseStatsRecorder;
  #index = 0;
  #lastEndNs = 0n;

  constructor(times: RequestTimes, recorder: ResponseStatsRecorder) {
    this.#times = times;
    this.#recorder = recorder;
  }

  /** One response handed over; `outputStartNs` is when its outputs arrived, absent for one without outputs. */
  delivered(outcome: ResponseOutcome, outputStartNs?: bigint): void {
    const endNs = process.hrtime.bigint();
    const startNs = this.#lastEndNs !== 0n ? this.#lastEndNs : this.#times.computeStartNs !== 0n ? this.#times.computeStartNs : endNs;
    const totalNs = Number(endNs - startNs);
    const outputNs = outputStartNs === undefined ? 0 : Number(endNs - outputStartNs);
    this.#recorder.recordResponse(this.#index++, outcome, totalNs - outputNs, outputNs, totalNs);
    this.#lastEndNs = endNs;
  }
}
