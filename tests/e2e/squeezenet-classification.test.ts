import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { float16Value } from "../../protocol/float16";
import { mugInputFp16, squeezenetRepository } from "../helpers/squeezenet";
import { type RunningServer, startServer } from "../helpers/server-process";
import { tensorValues } from "./http-transport";

describe("real SqueezeNet 1.1 (FP16) over REST with the binary extension", () => {
  let server: RunningServer;
  let repository: string;
  beforeAll(async () => {
    repository = squeezenetRepository();
    server = await startServer({ repository });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  async function infer(outputs: unknown[]): Promise<{ header: { outputs: { name: string; datatype: string; shape: number[]; parameters: { binary_data_size: number } }[] }; binary: Uint8Array }> {
    const input = mugInputFp16();
    const header = Buffer.from(JSON.stringify({
      inputs: [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224], parameters: { binary_data_size: input.byteLength } }],
      outputs,
    }));
    const response = await fetch(`${server.httpUrl}/v2/models/squeezenet/infer`, {
      method: "POST", body: Buffer.concat([header, input]),
      headers: { "inference-header-content-length": String(header.byteLength) },
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(response.status, Buffer.from(bytes).toString()).toBe(200);
    const length = Number(response.headers.get("inference-header-content-length"));
    return { header: JSON.parse(Buffer.from(bytes.subarray(0, length)).toString()), binary: bytes.subarray(length) };
  }

  it("classifies mug.jpg as 504 COFFEE MUG through the classification extension", async () => {
    const { header, binary } = await infer([{ name: "softmaxout_1", parameters: { classification: 3, binary_data: true } }]);
    expect(header.outputs[0]).toMatchObject({ name: "softmaxout_1", datatype: "BYTES", shape: [3] });
    const classes = tensorValues("BYTES", binary) as string[];
    expect(classes[0]).toMatch(/^0\.98\d{4}:504:COFFEE MUG$/);
    expect(classes[1]).toMatch(/^0\.01\d{4}:968:CUP$/);
  });

  it("returns the FP16 probabilities as binary, top-1 504 at about 0.987", async () => {
    const { header, binary } = await infer([{ name: "softmaxout_1", parameters: { binary_data: true } }]);
    expect(header.outputs[0]).toMatchObject({ datatype: "FP16", shape: [1, 1000, 1, 1], parameters: { binary_data_size: 2000 } });
    const halves = tensorValues("FP16", binary) as number[];
    const floats = halves.map(float16Value);
    const top = floats.indexOf(Math.max(...floats));
    expect(top).toBe(504);
    expect(floats[504]).toBeCloseTo(0.9873, 2);
  });

  it("refuses FP16 output as JSON, as Triton does", async () => {
    const input = mugInputFp16();
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224], parameters: { binary_data_size: input.byteLength } }] }));
    const response = await fetch(`${server.httpUrl}/v2/models/squeezenet/infer`, {
      method: "POST", body: Buffer.concat([header, input]), headers: { "inference-header-content-length": String(header.byteLength) },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.stringMatching(/FP16 data via JSON is not supported/) });
  });
});
