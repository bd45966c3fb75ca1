import { describe, expect, it } from "vitest";
import { Cancellation, InferenceError, type CancellationSignal, type OutputTensor, type StreamResponse } from "../../../../server/core/index";
import type { ResponseFlow } from "../../../../server/core/request/response-flow";
import { ResponseStream } from "../../../../server/core/request/response-stream";

/** A request signal that counts the listeners on it, as a gRPC stream's signal shared by all its requests would carry them. */
class CountingSignal extends Cancellation {
  listeners = 0;
  override addEventListener(type: "abort", listener: () => void): void {
    this.listeners++;
    super.addEventListener(type, listener);
  }
  override removeEventListener(type: "abort", listener: () => void): void {
    this.listeners--;
    super.removeEventListener(type, listener);
  }
}

function streamOf(signal?: CancellationSignal) {
  const events: StreamResponse[] = [];
  const ends: (InferenceError | undefined)[] = [];
  const stream = new ResponseStream((event) => events.push(event), {
    responseOf: (outputs) => {
      if (outputs.length === 0) throw new InferenceError("INTERNAL", "model produced no output 'OUT'");
      return { modelName: "m", modelVersion: "1", outputs };
    },
    signal, endsOnCancel: true, onEnd: (error) => ends.push(error), backlog: 1024,
  });
  return { stream, events, ends };
}

const OUT = [{ name: "OUT", datatype: "INT32" as const, shape: [1], data: new Uint8Array(4) }];

const ANSWERING = {
  responseOf: (outputs: OutputTensor[]) => ({ modelName: "m", modelVersion: "1", outputs }), signal: undefined, endsOnCancel: true, backlog: 1024,
};

/** A client's flow control the test turns on and off, as a connection's buffer filling and draining would. */
class SwitchedFlow implements ResponseFlow {
  blocked = false;
  #waiting: (() => void)[] = [];

  whenUnblocked(listener: () => void): void {
    if (this.blocked) this.#waiting.push(listener);
    else listener();
  }

  unblock(): void {
    this.blocked = false;
    for (const listener of this.#waiting.splice(0)) listener();
  }
}

describe("ResponseStream", () => {
  it("passes responses on until the final one and drops what comes after, ending once", () => {
    const signal = new CountingSignal();
    const { stream, events, ends } = streamOf(signal);
    stream.send(OUT, false);
    stream.send(new InferenceError("INVALID_ARG", "refused"), false);
    stream.send(undefined, true);
    stream.send(OUT, false);
    stream.fail(new InferenceError("INTERNAL", "late"));
    expect(events.map((e) => [e.response instanceof InferenceError ? e.response.message : e.response?.modelName, e.final])).toEqual([
      ["m", false], ["refused", false], [undefined, true],
    ]);
    expect(ends).toEqual([undefined]);
    expect(stream.cancelled).toBe(true);
    expect(signal.listeners).toBe(0);
  });

  it("turns outputs it cannot answer into an error response", () => {
    const { stream, events, ends } = streamOf();
    stream.send([], true);
    expect(events).toEqual([{ response: new InferenceError("INTERNAL", "model produced no output 'OUT'"), final: true }]);
    expect(ends[0]?.message).toBe("model produced no output 'OUT'");
  });

  it("on the client's cancellation ends with CANCELLED, tells the model's listeners and stops listening to the shared signal", () => {
    const signal = new CountingSignal();
    const { stream, events, ends } = streamOf(signal);
    let told = 0;
    stream.onCancel(() => told++);
    stream.send(OUT, false);
    signal.abort();
    stream.send(OUT, false);
    expect(told).toBe(1);
    expect(stream.signal.aborted).toBe(true);
    expect(events.at(-1)).toEqual({ response: new InferenceError("CANCELLED", "request was cancelled by the client"), final: true });
    expect(events).toHaveLength(2);
    expect(ends.map((e) => e?.code)).toEqual(["CANCELLED"]);
    expect(signal.listeners).toBe(0);
    stream.onCancel(() => told++);
    expect(told).toBe(2);
  });

  it("keeps a listener that throws from the model's side: the model sees the request cancelled, the listener gets one final INTERNAL error", () => {
    const events: StreamResponse[] = [];
    const ends: (InferenceError | undefined)[] = [];
    const stream = new ResponseStream((event) => {
      events.push(event);
      if (!event.final) throw new TypeError("The encoded data was not valid for encoding utf-8");
    }, { ...ANSWERING, onEnd: (error) => ends.push(error) });
    let told = 0;
    stream.onCancel(() => told++);
    expect(() => stream.send(OUT, false)).not.toThrow();
    expect(told).toBe(1);
    expect(stream.cancelled).toBe(true);
    expect(events.at(-1)).toEqual({
      response: new InferenceError("INTERNAL", "a response could not be delivered: The encoded data was not valid for encoding utf-8"), final: true,
    });
    expect(ends.map((e) => e?.code)).toEqual(["INTERNAL"]);
    stream.send(OUT, false);
    expect(events).toHaveLength(2);
  });

  it("swallows a throw on the final event: nothing is left to deliver", () => {
    const stream = new ResponseStream(() => {
      throw new Error("frontend gone");
    }, { ...ANSWERING, onEnd: () => undefined });
    expect(() => stream.send(OUT, true)).not.toThrow();
    expect(stream.ended).toBe(true);
  });

  describe("flow control", () => {
    it("is ready while its client keeps up, and tells a waiting model once the client took what was written", () => {
      const flow = new SwitchedFlow();
      const stream = new ResponseStream(() => undefined, { ...ANSWERING, flow, onEnd: () => undefined });
      expect(stream.ready).toBe(true);
      flow.blocked = true;
      expect(stream.ready).toBe(false);
      let told = 0;
      stream.onReady(() => told++);
      expect(told).toBe(0);
      flow.unblock();
      expect(told).toBe(1);
      expect(stream.ready).toBe(true);
    });

    it("fails the stream UNAVAILABLE and cancels the model once more responses than the backlog are written to a blocked client", () => {
      const flow = new SwitchedFlow();
      const events: StreamResponse[] = [];
      const ends: (InferenceError | undefined)[] = [];
      const stream = new ResponseStream((event) => events.push(event), { ...ANSWERING, flow, backlog: 3, onEnd: (error) => ends.push(error) });
      let cancelled = 0;
      stream.onCancel(() => cancelled++);
      stream.send(OUT, false);
      flow.blocked = true;
      for (let i = 0; i < 3; i++) stream.send(OUT, false);
      expect(events).toHaveLength(4);
      expect(cancelled).toBe(0);
      stream.send(OUT, false);
      expect(cancelled).toBe(1);
      expect(events.at(-1)).toEqual({
        response: new InferenceError("UNAVAILABLE", "the client is not reading its responses: more than 3 wait to be written (--max-stream-backlog)"), final: true,
      });
      expect(ends.map((e) => e?.code)).toEqual(["UNAVAILABLE"]);
      expect(stream.ready).toBe(true);
    });

    it("counts only the responses written since the client last caught up", () => {
      const flow = new SwitchedFlow();
      const events: StreamResponse[] = [];
      const stream = new ResponseStream((event) => events.push(event), { ...ANSWERING, flow, backlog: 2, onEnd: () => undefined });
      for (let round = 0; round < 5; round++) {
        flow.blocked = true;
        stream.send(OUT, false);
        stream.send(OUT, false);
        flow.unblock();
      }
      stream.send(OUT, true);
      expect(events).toHaveLength(11);
      expect(events.every((event) => !(event.response instanceof InferenceError))).toBe(true);
    });
  });
});
