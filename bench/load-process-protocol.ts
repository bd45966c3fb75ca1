/** Messages between the bench and its load processes (Node IPC): several, so that one JS thread does not limit. */
import type { SideMeasurement } from "../tools/perf/index";
import type { ChildStatusMessage, MeasurementWindow } from "./child-messages";

/** argv of the child, as JSON: whom it sends what. */
export interface LoadProcessSettings {
  /** http://host:port or grpc://host:port. */
  readonly url: string;
  readonly model: string;
  readonly inputName: string;
  readonly inputDatatype: "FP32" | "FP16";
  /** The request's shape, batch dimension included. */
  readonly inputShape: readonly number[];
}

export interface LoadProcessRequest extends MeasurementWindow {
  readonly concurrency: number;
}

export type LoadProcessMessage =
  | ChildStatusMessage
  | {
      readonly type: "measured"; readonly measured: SideMeasurement;
      /** Requests sent, warm-up included (for the server's CPU per request). */
      readonly sent: number;
      /** The process's CPU while it measured, as a share of one core. */
      readonly cpuShare: number;
    };
