import { describe, expect, it } from "vitest";
import type { ModelCallResult, ModelCallStreamEvent } from "../../../../server/backends/backend";
import { Cancellation, InferenceError, type InferenceTrace, type InferRequest, type StreamListener } from "../../../../server/core/index";
import { type Callee, type CallOrigin, ModelCalls } from "../../../../server/core/scheduling/model-calls";

const ECHO_INPUT = { datatype: "FP32", shape: [1], data: new Uint8Array(new Float32Array([2]).buffer) };

/**
 * A core that answers every request with its inputs, after `gate` (if any) resolves; records what it got. Streamed,
 * it answers the inputs, an INVALID_ARG error response, then the final flag alone.
 */
function echoHost(callees: Readonly<Record<string, Partial<Callee>>>, gate?: Promise<void>) {
  const requests: InferRequest[] = [];
  const infer = async (request: InferRequest) => {
    requests.push(request);
    await gate;
    if (request.signal?.aborted) throw new InferenceError("CANCELLED", "request was cancelled by the client");
    return { modelName: request.modelName, modelVersion: "1", outputs: request.inputs };
  };
  const stream = (request: InferRequest, listener: StreamListener): void => {
    requests.push(request);
    void Promise.resolve(gate).then(() => {
      listener({ response: { modelName: request.modelName, modelVersion: "1", outputs: request.inputs }, final: false });
      listener({ response: new InferenceError("INVALID_ARG", "response 1 is refused"), final: false });
      listener({ response: undefined, final: true });
    });
  };
  const host = {
    model: (modelName: string): Callee => {
      const callee = callees[modelName];
      if (callee === undefined) throw new InferenceError("NOT_FOUND", `Request for unknown model: '${modelName}' is not found`);
      return { name: modelName, version: "1", instanceCount: 1, sharesOutputs: false, decoupled: false, busyInstances: () => 0, infer, stream, ...callee };
    },
  };
  return { host, requests };
}

const origin = (chain: CallOrigin["chain"], extra: Partial<CallOrigin> = {}): CallOrigin => ({ chain, signal: undefined, trace: undefined, ...extra });
const call = (modelName: string) => ({ modelName, inputs: new Map([["X", { ...ECHO_INPUT, data: ECHO_INPUT.data.slice() }]]) });
const codeOf = (result: ModelCallResult): string | undefined => ("error" in result ? result.error.code : undefined);

describe("ModelCalls", () => {
  it("sends a call as a request carrying the chain that waits on it, and answers with its outputs", async () => {
    const { host, requests } = echoHost({ b: {} });
    const result = await new ModelCalls(host).callerFor(origin([{ modelName: "x", modelVersion: 2 }]), { modelName: "a", modelVersion: 1 }).infer(call("b"));
    expect(result).toMatchObject({ modelName: "b", modelVersion: "1", outputs: new Map([["X", expect.objectContaining({ datatype: "FP32" })]]) });
    expect(requests[0]!.chain).toEqual([{ modelName: "x", modelVersion: 2 }, { modelName: "a", modelVersion: 1 }]);
  });

  it("refuses a call nested deeper than its maximum, which is configurable", async () => {
    const { host } = echoHost({ b: { instanceCount: 0 } });
    const chainOf = (length: number) => Array.from({ length: length - 1 }, (_, i) => ({ modelName: `m${i}`, modelVersion: 1 }));
    const self = { modelName: "a", modelVersion: 1 };
    expect(codeOf(await new ModelCalls(host, 3).callerFor(origin(chainOf(3)), self).infer(call("b")))).toBeUndefined();
    const refused = await new ModelCalls(host, 3).callerFor(origin(chainOf(4)), self).infer(call("b"));
    expect(refused).toEqual({ error: { code: "UNAVAILABLE", message: expect.stringContaining("it would nest 4 model calls, beyond the maximum of 3") } });
    expect(codeOf(await new ModelCalls(host, 4).callerFor(origin(chainOf(4)), self).infer(call("b")))).toBeUndefined();
  });

  it("refuses a call into a model only while the chain holds all its instances; ensembles hold none", async () => {
    const { host } = echoHost({ a: { instanceCount: 2 }, ens: { instanceCount: 0 } });
    const a = { modelName: "a", modelVersion: 1 };
    const calls = new ModelCalls(host);
    expect(codeOf(await calls.callerFor(origin([]), a).infer(call("a")))).toBeUndefined();
    expect(codeOf(await calls.callerFor(origin([a]), a).infer(call("a")))).toBe("UNAVAILABLE");
    expect(codeOf(await calls.callerFor(origin([{ modelName: "ens", modelVersion: 1 }]), { modelName: "ens", modelVersion: 1 }).infer(call("ens")))).toBeUndefined();
  });

  it("answers a core error with its code and message", async () => {
    const { host } = echoHost({});
    expect(await new ModelCalls(host).callerFor(origin([]), { modelName: "a", modelVersion: 1 }).infer(call("gone"))).toEqual({
      error: { code: "NOT_FOUND", message: "Request for unknown model: 'gone' is not found" },
    });
  });

  it("cancels the call when the request it serves is cancelled, or when the call's own signal aborts", async () => {
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { host } = echoHost({ b: {} }, gate);
    const parent = new Cancellation();
    const mine = new AbortController();
    const calls = new ModelCalls(host);
    const byParent = calls.callerFor(origin([], { signal: parent }), { modelName: "a", modelVersion: 1 }).infer(call("b"));
    const byCall = calls.callerFor(origin([]), { modelName: "a", modelVersion: 1 }).infer({ ...call("b"), signal: mine.signal });
    const untouched = calls.callerFor(origin([]), { modelName: "a", modelVersion: 1 }).infer(call("b"));
    parent.abort();
    mine.abort();
    open();
    expect((await Promise.all([byParent, byCall, untouched])).map(codeOf)).toEqual(["CANCELLED", "CANCELLED", undefined]);
  });

  it("traces the call as a child of the request it serves", async () => {
    const { host, requests } = echoHost({ b: {} });
    const child = { model: () => undefined, timestamp: () => undefined, tensors: () => undefined, child: () => child } as InferenceTrace;
    const parent = { ...child, child: () => child } as InferenceTrace;
    await new ModelCalls(host).callerFor(origin([], { trace: parent }), { modelName: "a", modelVersion: 1 }).infer(call("b"));
    expect(requests[0]!.trace).toBe(child);
  });

  it("hands out copies of outputs the callee may share (response cache hits), the outputs themselves otherwise", async () => {
    for (const sharesOutputs of [true, false]) {
      const { host } = echoHost({ b: { sharesOutputs } });
      const sent = call("b");
      const result = await new ModelCalls(host).callerFor(origin([]), { modelName: "a", modelVersion: 1 }).infer(sent);
      const same = !("error" in result) && result.outputs.get("X")!.data === sent.inputs.get("X")!.data;
      expect(same).toBe(!sharesOutputs);
    }
  });

  describe("streamed", () => {
    const a = { modelName: "a", modelVersion: 1 };
    async function collect(calls: ModelCalls, chain: CallOrigin["chain"], modelName: string): Promise<ModelCallStreamEvent[]> {
      const events: ModelCallStreamEvent[] = [];
      await calls.callerFor(origin(chain), a).stream(call(modelName), (event) => events.push(event));
      return events;
    }

    it("hands on each response as a result, error responses as errors, the final flag alone as no result", async () => {
      const { host, requests } = echoHost({ b: { decoupled: true } });
      expect(await collect(new ModelCalls(host), [], "b")).toEqual([
        { result: { modelName: "b", modelVersion: "1", outputs: new Map([["X", expect.objectContaining({ datatype: "FP32" })]]) }, final: false },
        { result: { error: { code: "INVALID_ARG", message: "response 1 is refused" } }, final: false },
        { result: undefined, final: true },
      ]);
      expect(requests[0]!.chain).toEqual([a]);
    });

    it("refuses, as one final error, what infer refuses: an unknown model, a call nested too deep or into its own busy instance", async () => {
      const { host, requests } = echoHost({ a: { decoupled: true }, b: { decoupled: true } });
      const calls = new ModelCalls(host, 1);
      expect(await collect(calls, [], "gone")).toEqual([{ result: { error: { code: "NOT_FOUND", message: "Request for unknown model: 'gone' is not found" } }, final: true }]);
      expect(await collect(calls, [], "a")).toEqual([{ result: { error: { code: "UNAVAILABLE", message: expect.stringContaining("all 1 of them are held") } }, final: true }]);
      expect(await collect(calls, [{ modelName: "x", modelVersion: 1 }, { modelName: "y", modelVersion: 1 }], "b")).toEqual([
        { result: { error: { code: "UNAVAILABLE", message: expect.stringContaining("beyond the maximum of 1") } }, final: true },
      ]);
      expect(requests).toEqual([]);
    });

    it("cancels the callee's request when the request it serves is cancelled, or when the call's own signal aborts", async () => {
      const { host, requests } = echoHost({ b: { decoupled: true } });
      const parent = new Cancellation();
      const mine = new AbortController();
      const calls = new ModelCalls(host);
      void calls.callerFor(origin([], { signal: parent }), a).stream(call("b"), () => undefined);
      void calls.callerFor(origin([]), a).stream({ ...call("b"), signal: mine.signal }, () => undefined);
      void calls.callerFor(origin([]), a).stream(call("b"), () => undefined);
      parent.abort();
      mine.abort();
      expect(requests.map((request) => request.signal?.aborted)).toEqual([true, true, false]);
    });
  });

  it("refuses infer on a decoupled callee, pointing to inferStream", async () => {
    const { host, requests } = echoHost({ b: { decoupled: true } });
    expect(await new ModelCalls(host).callerFor(origin([]), { modelName: "a", modelVersion: 1 }).infer(call("b"))).toEqual({
      error: { code: "UNSUPPORTED", message: "model 'b' is decoupled (model_transaction_policy { decoupled: true }): call it with context.inferStream(), which yields its responses as they come" },
    });
    expect(requests).toEqual([]);
  });
});
