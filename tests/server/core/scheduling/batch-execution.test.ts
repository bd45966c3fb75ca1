import { describe, expect, it } from "vitest";
import type { BackendExecution, BackendInstance, BackendResponse, ExecutionTimes } from "../../../../server/backends/backend";
import { InferenceError, type OutputTensor } from "../../../../server/core/index";
import { type ExecutionContext, type ExecutionItem, executionTimings, runExecutions } from "../../../../server/core/scheduling/batch-execution";
import type { BatchSignature } from "../../../../server/core/scheduling/batch-tensors";
import type { ResponseSink } from "../../../../server/core/scheduling/request-scheduler";

/** INPUT [-1] is reshaped to [2, -1] for the backend; OUTPUT comes back as [2, 2] and reaches the client as [4]. */
const signature: BatchSignature = {
  maxBatchSize: 4,
  inputs: [{ name: "INPUT", datatype: "UINT8", dims: [4], reshape: [2, 2] }],
  reshapesInputs: true,
  outputs: [{ name: "OUTPUT", datatype: "UINT8", dims: [4], reshape: [2, 2], optional: false, labels: undefined }],
  outputsByName: new Map([["OUTPUT", { name: "OUTPUT", datatype: "UINT8", dims: [4], reshape: [2, 2], optional: false, labels: undefined }]]),
};

function item(values: number[], sink?: ResponseSink): ExecutionItem {
  const data = Uint8Array.from(values);
  return { request: { batchSize: 1, shapeKey: "", inputs: new Map([["INPUT", { name: "INPUT", datatype: "UINT8", shape: [1, 4], data }]]), outputs: [{ name: "OUTPUT" }] }, parameters: {}, sink };
}

/** A sink that keeps what it is sent. */
function recordingSink(): ResponseSink & { sent: [OutputTensor[] | InferenceError | undefined, boolean][] } {
  const sent: [OutputTensor[] | InferenceError | undefined, boolean][] = [];
  return { sent, send: (response, final) => void sent.push([response, final]), cancelled: false, onCancel: () => undefined, ready: true, onReady: (listener) => listener() };
}

/** A request's INPUT as its OUTPUT. */
const echo = (request: BackendExecution[number]): BackendResponse => ({ outputs: new Map([["OUTPUT", request.inputs.get("INPUT")!]]) });

/** A backend double that answers each request with `answer` (an echo by default) and times each execution 10 ns apart. */
function instance(answer: (request: BackendExecution[number]) => BackendResponse | "none" = echo): BackendInstance & { seen: BackendExecution[] } {
  const seen: BackendExecution[] = [];
  return {
    seen, io: undefined, executionThread: "main", executionProvider: "cpu", groupsExecutions: true, close: async () => undefined,
    execute: async (executions): Promise<ExecutionTimes[]> => executions.map((requests, e) => {
      seen.push(requests);
      for (const request of requests) {
        const response = answer(request);
        if (response !== "none") request.responder.send(response, true);
      }
      const startNs = 1000n + BigInt(e) * 10n;
      return { startNs, endNs: startNs + 10n, computeInputNs: 1, computeInferNs: 2, computeOutputNs: 3 };
    }),
  };
}

const answerOnce: ExecutionContext = { signature, decoupled: false };

describe("runExecutions", () => {
  it("hands the backend each request's inputs reshaped, and the client its outputs checked and shaped back", async () => {
    const backend = instance();
    const run = await runExecutions(backend, [[item([1, 2, 3, 4])]], answerOnce, 0n);
    expect(backend.seen[0]![0]!.inputs.get("INPUT")!.shape).toEqual([1, 2, 2]);
    expect(backend.seen[0]![0]!.batchSize).toBe(1);
    const [outputs] = run.results[0]! as [OutputTensor[]];
    expect(outputs).toEqual([{ name: "OUTPUT", datatype: "UINT8", shape: [1, 4], data: Uint8Array.of(1, 2, 3, 4) }]);
  });

  it("keeps a model's one answer for the scheduler, and fails a request the backend left unanswered or answered wrongly", async () => {
    const sink = recordingSink();
    let n = 0;
    const backend = instance((request) => {
      n++;
      if (n === 2) return "none";
      if (n === 3) return { outputs: new Map([["OUTPUT", { datatype: "FP32", shape: [1, 2, 2], data: new Uint8Array(16) }]]) };
      return echo(request);
    });
    const run = await runExecutions(backend, [[item([1, 2, 3, 4], sink), item([5, 6, 7, 8]), item([0, 0, 0, 0])]], answerOnce, 0n);
    expect(sink.sent).toEqual([]);
    const [first, second, third] = run.results[0]!;
    expect(first).not.toBeInstanceOf(InferenceError);
    expect(second).toEqual(new InferenceError("INTERNAL", "the backend sent no response to a request of a model that is not decoupled"));
    expect((third as InferenceError).message).toBe("model returned output 'OUTPUT' as FP32, but the model config declares UINT8");
  });

  it("sends a decoupled request's responses to its sink as they come, and nothing after its final flag", async () => {
    const sink = recordingSink();
    const backend = instance((request) => {
      request.responder.send(echo(request), false);
      return { error: { code: "INVALID_ARG", message: "enough" } };
    });
    const run = await runExecutions(backend, [[item([1, 2, 3, 4], sink)]], { signature, decoupled: true }, 0n);
    expect(run.results).toEqual([[undefined]]);
    expect(sink.sent.map(([response, final]) => [response instanceof InferenceError ? response.message : "outputs", final])).toEqual([["outputs", false], ["enough", true]]);
  });

  it("fails every request not answered yet when the instance fails, and counts none of its executions", async () => {
    const failing: BackendInstance = {
      ...instance(), execute: async ([requests]) => {
        requests![0]!.responder.send(echo(requests![0]!), true);
        throw new Error("the worker died");
      },
    };
    const run = await runExecutions(failing, [[item([1, 2, 3, 4]), item([5, 6, 7, 8])]], answerOnce, 0n);
    expect(run.outcomes).toEqual([undefined]);
    expect(run.results[0]![0]).not.toBeInstanceOf(InferenceError);
    expect(run.results[0]![1]).toEqual(new InferenceError("INTERNAL", "the worker died"));
  });

  it("times the first of several executions from the call's start, the last until the call is back, those between by the backend", async () => {
    const run = await runExecutions(instance(), [[item([1, 2, 3, 4])], [item([1, 2, 3, 4])], [item([1, 2, 3, 4])]], answerOnce, 500n);
    const [first, middle, last] = run.outcomes;
    expect([first!.startNs, first!.assembledNs, first!.endNs]).toEqual([500n, 1000n, 1010n]);
    expect([middle!.startNs, middle!.endNs]).toEqual([1010n, 1020n]);
    expect(last!.startNs).toBe(1020n);
    expect(last!.endNs).toBeGreaterThan(1030n); // the hrtime clock, long past these made-up times
    expect(executionTimings(first!, 1, 1)).toEqual({ batchSize: 1, requestCount: 1, computeInputNs: 501, computeInferNs: 2, computeOutputNs: 7 });
  });
});
