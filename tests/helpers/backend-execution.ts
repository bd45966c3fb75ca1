import type { BackendInstance, BackendRequest, BackendResponder, BackendResponse, ExecutionTimes, TensorMap } from "../../server/backends/backend";

/** A request as a test writes it: the responder is the helper's, the batch size 1 unless given. */
export type TestRequest = Omit<BackendRequest, "responder" | "batchSize"> & { readonly batchSize?: number };

/** A responder that keeps what it is sent, for a request nobody streams to. */
export class RecordingResponder implements BackendResponder {
  readonly responses: (BackendResponse | undefined)[] = [];
  final = false;
  readonly cancelled = false;
  readonly ready = true;

  send(response: BackendResponse | undefined, final: boolean): void {
    this.responses.push(response);
    this.final ||= final;
  }

  onCancel(): void {}

  onReady(listener: () => void): void {
    listener();
  }
}

/**
 * Runs `requests` as one execution on `instance`, as the core would, for a model that answers once: each request's
 * response, in order, and the execution's times. Rejects with the message of an execution that failed as a whole, or the instance's failure.
 */
export async function executeRequests(
  instance: BackendInstance, requests: readonly TestRequest[],
): Promise<{ responses: BackendResponse[]; times: ExecutionTimes }> {
  const responders = requests.map(() => new RecordingResponder());
  const [times] = await instance.execute([requests.map((request, i) => ({ batchSize: 1, ...request, responder: responders[i]! }))]);
  const responses = responders.map((responder) => responder.responses.at(-1));
  if (times === undefined) {
    const failed = responses.find((response) => response !== undefined && "error" in response);
    throw new Error(failed !== undefined && "error" in failed ? failed.error.message : "the execution failed without an error response");
  }
  return {
    responses: responses.map((response, i) => {
      if (response === undefined) throw new Error(`request ${i} of the execution got no response`);
      return response;
    }),
    times,
  };
}

/** One request of `inputs` as a batch of its own: its outputs. Rejects with the execution's error. */
export async function executeBatch(instance: BackendInstance, inputs: TensorMap, requestedOutputs: readonly string[]): Promise<TensorMap> {
  const { responses: [response] } = await executeRequests(instance, [{ inputs, parameters: {}, requestedOutputs }]);
  if (response === undefined || "error" in response) throw new Error(`expected outputs, got ${JSON.stringify(response)}`);
  return response.outputs;
}
