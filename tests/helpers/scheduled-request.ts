import { InferenceError, type OutputTensor } from "../../server/core/index";
import { RequestTimes } from "../../server/core/request/request-times";
import type { RequestScheduler, ScheduleOptions } from "../../server/core/scheduling/request-scheduler";
import type { ValidatedRequest } from "../../server/core/request/request-validation";

/** What a scheduler answered one request: its outputs, and the times it recorded on the request. */
export interface ScheduledAnswer {
  readonly outputs: OutputTensor[];
  readonly times: RequestTimes;
}

/**
 * Enqueues `request` as the core does (a fresh record of its times, a sink for its one answer) and resolves with the
 * final response's outputs, or rejects with its error.
 */
export function scheduled(scheduler: RequestScheduler, request: ValidatedRequest, options: Omit<ScheduleOptions, "sink" | "times"> = {}): Promise<ScheduledAnswer> {
  const times = new RequestTimes();
  return new Promise<ScheduledAnswer>((resolve, reject) => scheduler.enqueue(request, {
    ...options, times,
    sink: {
      send: (response, final) => {
        if (!final) return;
        if (response instanceof InferenceError) reject(response);
        else resolve({ outputs: response ?? [], times });
      },
      cancelled: false,
      onCancel: () => undefined,
      ready: true,
      onReady: (listener) => listener(),
    },
  }));
}
