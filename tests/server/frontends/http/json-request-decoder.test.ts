import { afterAll, describe, expect, it } from "vitest";
import { InferenceError } from "../../../../server/core/index";
import { decodeInferRequest } from "../../../../server/frontends/http/infer-request-codec";
import { InferRequestDecoder, OFF_THREAD_JSON_BYTES } from "../../../../server/frontends/http/json-request-decoder";

const context = {
  modelName: "m", modelVersion: "2", modelInputs: () => {
    throw new Error("not a raw request");
  },
};

/** A body with a large JSON INT64 input, a binary FP32 input after the header, and a request parameter. */
function largeBody(): { body: Uint8Array; headerLength: number; values: bigint[] } {
  const values = Array.from({ length: OFF_THREAD_JSON_BYTES / 4 }, (_, i) => BigInt(i) * 12345678901n - 7n);
  const header = `{"id":"big","parameters":{"priority":2,"binary_data_output":true},"inputs":[`
    + `{"name":"A","datatype":"INT64","shape":[1,${values.length}],"data":[${values.join(",")}]},`
    + `{"name":"B","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}],"outputs":[{"name":"Y"}]}`;
  const headerBytes = Buffer.from(header);
  const body = new Uint8Array(headerBytes.byteLength + 8);
  body.set(headerBytes);
  body.set(new Uint8Array(Float32Array.of(1.5, -2).buffer), headerBytes.byteLength);
  return { body, headerLength: headerBytes.byteLength, values };
}

describe("InferRequestDecoder", () => {
  const decoder = new InferRequestDecoder();
  afterAll(() => decoder.close());

  it("decodes a large JSON body on a worker thread exactly as the main thread would", async () => {
    const { body, headerLength, values } = largeBody();
    const inline = decodeInferRequest(body.slice(), headerLength, context);
    const offThread = await decoder.decode(body, headerLength, context);
    expect(offThread).toEqual(inline);
    expect([...new BigInt64Array(offThread.request.inputs[0]!.data.slice().buffer)]).toEqual(values);
    expect([...new Float32Array(offThread.request.inputs[1]!.data.slice().buffer)]).toEqual([1.5, -2]);
    // The body's memory moved to the worker instead of being copied.
    expect(body.byteLength).toBe(0);
  });

  it("answers the client's mistakes from the worker as the same InferenceError", async () => {
    const text = `{"inputs":[{"name":"A","datatype":"INT32","shape":[1,2],"data":[1,"x"]}],"pad":"${"p".repeat(OFF_THREAD_JSON_BYTES)}"}`;
    const error = await decoder.decode(Buffer.from(text), undefined, context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InferenceError);
    expect(error).toMatchObject({ code: "INVALID_ARG", message: `unable to parse 'data' of input 'A': expected INT32 elements, got "x"` });
  });

  it("keeps small and raw binary bodies on the main thread, leaving their memory in place", async () => {
    const small = Buffer.from('{"inputs":[{"name":"A","datatype":"INT32","shape":[1],"data":[3]}]}');
    const decoded = await decoder.decode(small, undefined, context);
    expect(decoded.request.inputs[0]!.data).toEqual(new Uint8Array([3, 0, 0, 0]));
    expect(small.byteLength).toBeGreaterThan(0);
  });
});
