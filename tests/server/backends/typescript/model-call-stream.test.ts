import { describe, expect, it } from "vitest";
import { ModelCallError } from "../../../../server/backends/typescript/model-call-error";
import { ModelCallStream } from "../../../../server/backends/typescript/model-call-stream";
import type { InferResult } from "../../../../server/backends/typescript/typescript-model";

const result = (value: number): InferResult => ({ modelName: "m", modelVersion: "1", outputs: { OUT: { datatype: "INT32", shape: [1], data: Int32Array.of(value) } } });
const valueOf = (r: InferResult): number => (r.outputs.OUT!.data as Int32Array)[0]!;

function stream() {
  let cancels = 0;
  return { stream: new ModelCallStream("m", () => cancels++), cancels: () => cancels };
}

describe("ModelCallStream (what context.inferStream returns)", () => {
  it("yields the responses in order, those pushed before and after the reads, and ends after the final one", async () => {
    const { stream: s, cancels } = stream();
    s.push(result(0), false);
    const seen: number[] = [];
    const loop = (async () => {
      for await (const r of s) seen.push(valueOf(r));
    })();
    s.push(result(1), false);
    await Promise.resolve();
    s.push(result(2), false);
    s.push(undefined, true);
    await loop;
    expect(seen).toEqual([0, 1, 2]);
    expect(cancels()).toBe(0);
  });

  it("ends with the last response when it carries the final flag, and ignores what comes after", async () => {
    const { stream: s } = stream();
    s.push(result(7), true);
    s.push(result(8), false);
    const seen: number[] = [];
    for await (const r of s) seen.push(valueOf(r));
    expect(seen).toEqual([7]);
  });

  it("rejects the read that reaches an error response, after the responses before it, and cancels the callee", async () => {
    const { stream: s, cancels } = stream();
    s.push(result(0), false);
    s.push(new ModelCallError("INVALID_ARG", "response 1 is refused", "m"), false);
    s.push(result(2), true);
    expect(cancels()).toBe(1);
    const seen: number[] = [];
    await expect((async () => {
      for await (const r of s) seen.push(valueOf(r));
    })()).rejects.toMatchObject({ name: "ModelCallError", code: "INVALID_ARG", model: "m", message: "response 1 is refused" });
    expect(seen).toEqual([0]);
    expect(await s.next()).toEqual({ done: true, value: undefined });
  });

  it("does not cancel a callee whose error response was final", async () => {
    const { stream: s, cancels } = stream();
    s.push(new ModelCallError("INTERNAL", "worker died", "m"), true);
    await expect(s.next()).rejects.toThrow("worker died");
    expect(cancels()).toBe(0);
  });

  it("cancels the callee once when the loop is left early, and ends a read still pending", async () => {
    const { stream: s, cancels } = stream();
    s.push(result(0), false);
    s.push(result(1), false);
    for await (const r of s) {
      expect(valueOf(r)).toBe(0);
      break;
    }
    expect(cancels()).toBe(1);
    expect(await s.next()).toEqual({ done: true, value: undefined });
    s.push(result(2), false);
    expect(await s.next()).toEqual({ done: true, value: undefined });

    const { stream: waiting, cancels: waitingCancels } = stream();
    const read = waiting.next();
    await waiting.return();
    expect(await read).toEqual({ done: true, value: undefined });
    await waiting.return();
    expect(waitingCancels()).toBe(1);
  });

  it("refuses a second read while one is pending", async () => {
    const { stream: s } = stream();
    const first = s.next();
    await expect(s.next()).rejects.toThrow("an earlier next() is pending");
    s.push(result(3), true);
    expect(valueOf((await first).value as InferResult)).toBe(3);
  });
});
