import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { BackendRequest } from "../../../server/backends/backend";
import { COPY_SLICE_BYTES, failExecution, gatherInputs, requestedOutputNames, scatterOutputs } from "../../../server/backends/batch-io";
import { bytesElementTexts, joinBytesStrings } from "../../../server/core/index";
import { RecordingResponder } from "../../helpers/backend-execution";

function request(data: Uint8Array, batchSize = 1, requestedOutputs: string[] = ["y"]): BackendRequest & { responder: RecordingResponder } {
  return {
    inputs: new Map([["x", { datatype: "UINT8", shape: [batchSize, data.byteLength / batchSize], data }]]), batchSize, parameters: {}, requestedOutputs,
    responder: new RecordingResponder(),
  };
}

describe("gatherInputs", () => {
  it("concatenates the requests' inputs into a buffer of their own along the batch dimension", async () => {
    const first = Uint8Array.of(1, 2, 3);
    const batch = await gatherInputs([request(first), request(Uint8Array.of(4, 5, 6, 7, 8, 9), 2)]);
    const x = batch.get("x")!;
    expect(x.shape).toEqual([3, 3]);
    expect([...x.data]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(x.data.buffer).not.toBe(first.buffer);
  });

  it("lets the event loop run while it copies a large input (other requests and health checks are not held up)", async () => {
    const size = 2 * COPY_SLICE_BYTES + 5;
    const data = Buffer.alloc(size, 7);
    data[size - 1] = 9;
    let turns = 0;
    let copying = true;
    const count = async (): Promise<void> => {
      while (copying) {
        await nextTurn();
        turns++;
      }
    };
    const counting = count();
    const batch = await gatherInputs([request(data)]);
    copying = false;
    await counting;
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(Buffer.from(batch.get("x")!.data).equals(data)).toBe(true);
  });
});

describe("scatterOutputs", () => {
  it("sends each request its rows of every output, final, by its batch size (BYTES by element offsets)", () => {
    const requests = [request(Uint8Array.of(0)), request(Uint8Array.of(0, 0), 2)];
    const texts = joinBytesStrings(["a", "bb", "ccc"]);
    scatterOutputs(new Map([
      ["y", { datatype: "INT16", shape: [3, 2], data: Uint8Array.from({ length: 12 }, (_, i) => i) }],
      ["s", { datatype: "BYTES", shape: [3], data: texts }],
    ]), requests);
    const [first, second] = requests.map((r) => {
      expect(r.responder.final).toBe(true);
      const response = r.responder.responses[0]!;
      if ("error" in response) throw new Error(response.error.message);
      return response.outputs;
    });
    expect(first!.get("y")).toMatchObject({ shape: [1, 2], data: Uint8Array.of(0, 1, 2, 3) });
    expect(second!.get("y")).toMatchObject({ shape: [2, 2], data: Uint8Array.from({ length: 8 }, (_, i) => i + 4) });
    expect(bytesElementTexts(first!.get("s")!.data, 1, "s")).toEqual(["a"]);
    expect(bytesElementTexts(second!.get("s")!.data, 2, "s")).toEqual(["bb", "ccc"]);
  });
});

describe("requestedOutputNames and failExecution", () => {
  it("asks for each output once, and answers every request of a failed execution with the error", () => {
    const requests = [request(Uint8Array.of(0), 1, ["y", "z"]), request(Uint8Array.of(0), 1, ["z"])];
    expect(requestedOutputNames(requests)).toEqual(["y", "z"]);
    expect(failExecution(requests, { code: "INTERNAL", message: "boom" })).toBeUndefined();
    for (const r of requests) expect(r.responder.responses).toEqual([{ error: { code: "INTERNAL", message: "boom" } }]);
  });
});
