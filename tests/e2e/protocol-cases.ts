import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ErrorCode } from "../../server/core/index";
import { type RunningServer, startServer, type StartOptions } from "../helpers/server-process";
import { type CaseRequest, type CaseTensor, isRawTensor, type ProtocolTransport, type RawCaseTensor } from "./protocol-transport";

/** One row of the table shared by every transport: a request and what a Triton client must get back. */
export interface ProtocolCase {
  readonly name: string;
  readonly request: CaseRequest;
  readonly expect:
    | { readonly outputs: readonly (Omit<CaseTensor, "values"> & { values?: CaseTensor["values"] })[] }
    | { readonly error: ErrorCode; readonly message: RegExp };
  /** Only for transports that carry tensors as raw bytes (FP16/BF16, deliberately malformed payloads). */
  readonly binaryOnly?: boolean;
}

const range = (n: number, f: (i: number) => number = (i) => i): number[] => Array.from({ length: n }, (_, i) => f(i));

const simpleInputs = (rows: number[][], other: number[][]): CaseTensor[] => [
  { name: "INPUT0", datatype: "INT32", shape: [rows.length, 16], values: rows.flat() },
  { name: "INPUT1", datatype: "INT32", shape: [other.length, 16], values: other.flat() },
];
const ones = [range(16, () => 1)];
const counting = [range(16)];

function le(bytes: number[]): Uint8Array {
  return Uint8Array.from(bytes);
}

/** Identity models per datatype, with values that exercise each type's range. */
const IDENTITY_VALUES: readonly { model: string; datatype: CaseTensor["datatype"]; values: CaseTensor["values"]; binaryOnly?: boolean }[] = [
  { model: "identity_bool", datatype: "BOOL", values: [true, false, true] },
  { model: "identity_uint8", datatype: "UINT8", values: [0, 1, 255] },
  { model: "identity_uint16", datatype: "UINT16", values: [0, 65535, 1234] },
  { model: "identity_uint32", datatype: "UINT32", values: [0, 4294967295, 7] },
  { model: "identity_uint64", datatype: "UINT64", values: [0n, 9007199254740993n, 18446744073709551615n] },
  { model: "identity_int8", datatype: "INT8", values: [-128, 0, 127] },
  { model: "identity_int16", datatype: "INT16", values: [-32768, 0, 32767] },
  { model: "identity_int32", datatype: "INT32", values: [-2147483648, 0, 2147483647] },
  { model: "identity_int64", datatype: "INT64", values: [-9223372036854775808n, 0n, 9007199254740993n] },
  { model: "identity_fp32", datatype: "FP32", values: [1.5, -0.25, 3.4028234663852886e38] },
  { model: "identity_fp64", datatype: "FP64", values: [Math.PI, -1e-300, 1.7976931348623157e308] },
  { model: "identity_bytes", datatype: "BYTES", values: ["hello", "", "ünïcödé ✓", "[1,12345678901234567890]"] },
  // FP16/BF16 travel as raw uint16 bit patterns: 1.0, -2.0, 65504 / 1.0, -2.0, 3.0e38-ish
  { model: "identity_fp16", datatype: "FP16", values: [0x3c00, 0xc000, 0x7bff], binaryOnly: true },
  { model: "identity_bf16", datatype: "BF16", values: [0x3f80, 0xc000, 0x7f7f], binaryOnly: true },
];

export const PROTOCOL_CASES: readonly ProtocolCase[] = [
  {
    name: "simple: sums and differences, batch 1",
    request: { model: "simple", inputs: simpleInputs(counting, ones) },
    expect: { outputs: [
      { name: "OUTPUT0", datatype: "INT32", shape: [1, 16], values: range(16, (i) => i + 1) },
      { name: "OUTPUT1", datatype: "INT32", shape: [1, 16], values: range(16, (i) => i - 1) },
    ] },
  },
  {
    name: "simple: batch 3, each row its own result",
    request: { model: "simple", inputs: simpleInputs([range(16), range(16, (i) => 100 * i), range(16, (i) => -i)], [ones[0]!, range(16, () => 2), range(16, () => 3)]) },
    expect: { outputs: [
      { name: "OUTPUT0", datatype: "INT32", shape: [3, 16], values: [...range(16, (i) => i + 1), ...range(16, (i) => 100 * i + 2), ...range(16, (i) => -i + 3)] },
      { name: "OUTPUT1", datatype: "INT32", shape: [3, 16], values: [...range(16, (i) => i - 1), ...range(16, (i) => 100 * i - 2), ...range(16, (i) => -i - 3)] },
    ] },
  },
  {
    name: "simple: explicit version 1, one requested output",
    request: { model: "simple", version: "1", inputs: simpleInputs(counting, ones), outputs: [{ name: "OUTPUT1" }] },
    expect: { outputs: [{ name: "OUTPUT1", datatype: "INT32", shape: [1, 16], values: range(16, (i) => i - 1) }] },
  },
  {
    name: "simple: classification extension, top 2 of OUTPUT0",
    request: { model: "simple", inputs: simpleInputs(counting, ones), outputs: [{ name: "OUTPUT0", classification: 2 }] },
    expect: { outputs: [{ name: "OUTPUT0", datatype: "BYTES", shape: [1, 2], values: ["16:15", "15:14"] }] },
  },
  {
    name: "resnet50: batch 2 gives [2,1000] logits",
    request: { model: "resnet50", inputs: [{ name: "input", datatype: "FP32", shape: [2, 3, 224, 224], values: range(2 * 3 * 224 * 224, (i) => (i % 255) / 255) }] },
    expect: { outputs: [{ name: "output", datatype: "FP32", shape: [2, 1000] }] },
  },
  ...IDENTITY_VALUES.map((c): ProtocolCase => ({
    name: `${c.model}: ${c.datatype} round trip`,
    binaryOnly: c.binaryOnly,
    request: { model: c.model, inputs: [{ name: "INPUT0", datatype: c.datatype, shape: [1, c.values.length], values: c.values }] },
    expect: { outputs: [{ name: "OUTPUT0", datatype: c.datatype, shape: [1, c.values.length], values: c.values }] },
  })),

  // Bad input: each must be refused with the protocol's error, and never hurt the server.
  { name: "unknown model", request: { model: "no_such_model", inputs: simpleInputs(counting, ones) }, expect: { error: "NOT_FOUND", message: /unknown model: 'no_such_model'/ } },
  { name: "unknown version", request: { model: "simple", version: "7", inputs: simpleInputs(counting, ones) }, expect: { error: "NOT_FOUND", message: /version 7 is not found/ } },
  // Triton's ValidateRequestInputs (core src/infer_request.cc), as qa/L0_input_validation/input_validation_test.py expects it.
  { name: "missing required input", request: { model: "simple", inputs: simpleInputs(counting, ones).slice(0, 1) }, expect: { error: "INVALID_ARG", message: /^expected 2 inputs but got 1 inputs for model 'simple'\. Got input\(s\) \['INPUT0'\], but missing required input\(s\) \['INPUT1'\]\. Please provide all required input\(s\)\.$/ } },
  { name: "no inputs", request: { model: "simple", inputs: [] }, expect: { error: "INVALID_ARG", message: /^expected 2 inputs but got 0 inputs for model 'simple'\. Got input\(s\) \[\], but missing required input\(s\) \['INPUT0','INPUT1'\]\. Please provide all required input\(s\)\.$/ } },
  // Triton's InferenceRequest::LogRequest() prefix on the request's own checks (core src/infer_request.cc).
  { name: "missing input of a request with an id", request: { model: "simple", id: "my-request", inputs: simpleInputs(counting, ones).slice(1) }, expect: { error: "INVALID_ARG", message: /^\[request id: my-request\] expected 2 inputs but got 1 inputs for model 'simple'\. Got input\(s\) \['INPUT1'\], but missing required input\(s\) \['INPUT0'\]/ } },
  { name: "unexpected extra input", request: { model: "simple", inputs: [...simpleInputs(counting, ones), { name: "INPUT2", datatype: "INT32", shape: [1, 16], values: range(16) }] }, expect: { error: "INVALID_ARG", message: /unexpected inference input 'INPUT2'/ } },
  { name: "misspelled input name", request: { model: "simple", inputs: [{ name: "input0", datatype: "INT32", shape: [1, 16], values: range(16) }, simpleInputs(counting, ones)[1]!] }, expect: { error: "INVALID_ARG", message: /unexpected inference input 'input0'/ } },
  { name: "datatype mismatch", request: { model: "simple", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 16], values: range(16) }, simpleInputs(counting, ones)[1]!] }, expect: { error: "INVALID_ARG", message: /data-type is 'FP32', but model 'simple' expects 'INT32'/ } },
  { name: "shape mismatch in a non-batch dim", request: { model: "simple", inputs: simpleInputs([range(15)], [range(15)]).map((t) => ({ ...t, shape: [1, 15] })) }, expect: { error: "INVALID_ARG", message: /^unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[1,15\]\. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape\. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero\. See the model configuration docs for more info on max_batch_size\.$/ } },
  { name: "shape mismatch of a request with an id", request: { model: "simple", id: "7", inputs: simpleInputs([range(15)], [range(15)]).map((t) => ({ ...t, shape: [1, 15] })) }, expect: { error: "INVALID_ARG", message: /^\[request id: 7\] unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[1,15\]\. NOTE: / } },
  { name: "missing batch dimension", request: { model: "simple", inputs: simpleInputs(counting, ones).map((t) => ({ ...t, shape: [16] })) }, expect: { error: "INVALID_ARG", message: /unexpected shape for input 'INPUT0'/ } },
  { name: "zero batch size", request: { model: "simple", inputs: simpleInputs([], []).map((t) => ({ ...t, shape: [0, 16] })) }, expect: { error: "INVALID_ARG", message: /batch dimension of at least 1/ } },
  { name: "batch larger than max_batch_size", request: { model: "simple", inputs: simpleInputs(range(9).map(() => range(16)), range(9).map(() => range(16))) }, expect: { error: "INVALID_ARG", message: /batch-size must be <= 8/ } },
  { name: "inputs with different batch sizes", request: { model: "simple", inputs: simpleInputs([range(16), range(16)], ones) }, expect: { error: "INVALID_ARG", message: /^input 'INPUT1' batch size does not match other inputs for 'simple'$/ } },
  { name: "element count does not match shape", request: { model: "simple", inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], values: range(15) }, simpleInputs(counting, ones)[1]!] }, expect: { error: "INVALID_ARG", message: /unexpected number of elements|byte size mismatch|Expected 64, got 60/ } },
  { name: "absurd dimensions", request: { model: "identity_fp32", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 2 ** 40], values: [1] }] }, expect: { error: "INVALID_ARG", message: /elements|number of elements|byte size/ } },
  { name: "duplicate input", request: { model: "simple", inputs: [...simpleInputs(counting, ones), simpleInputs(counting, ones)[0]!] }, expect: { error: "INVALID_ARG", message: /^input 'INPUT0' already exists in request$/ } },
  { name: "unknown requested output", request: { model: "simple", inputs: simpleInputs(counting, ones), outputs: [{ name: "OUTPUT9" }] }, expect: { error: "INVALID_ARG", message: /unexpected inference output 'OUTPUT9'/ } },
  // qa/L0_http/http_test.py and qa/L0_grpc/python_unit_test.py (test_duplicate_output_names_rejected).
  { name: "output requested twice", request: { model: "simple", id: "dup", inputs: simpleInputs(counting, ones), outputs: [{ name: "OUTPUT0" }, { name: "OUTPUT0" }] }, expect: { error: "INVALID_ARG", message: /^\[request id: dup\] output 'OUTPUT0' already exists in request$/ } },
  { name: "classification count 0", request: { model: "simple", inputs: simpleInputs(counting, ones), outputs: [{ name: "OUTPUT0", classification: 0 }] }, expect: { error: "INVALID_ARG", message: /positive integer/ } },
  { name: "classification of a BYTES output", request: { model: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], values: ["x"] }], outputs: [{ name: "OUTPUT0", classification: 1 }] }, expect: { error: "INVALID_ARG", message: /unsupported type 'BYTES'/ } },
  { name: "priority beyond the model's levels", request: { model: "simple", inputs: simpleInputs(counting, ones), parameters: { priority: 5 } }, expect: { error: "INVALID_ARG", message: /priority 5 is out of range/ } },
  { name: "negative timeout parameter", request: { model: "simple", inputs: simpleInputs(counting, ones), parameters: { timeout: -3 } }, expect: { error: "INVALID_ARG", message: /'timeout' must be a non-negative integer/ } },
  {
    name: "BYTES payload with a broken length prefix", binaryOnly: true,
    request: { model: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], raw: le([9, 0, 0, 0, 65, 66]) } satisfies RawCaseTensor] },
    expect: { error: "INVALID_ARG", message: /overruns the payload/ },
  },
  {
    name: "fixed-size payload shorter than its shape", binaryOnly: true,
    request: { model: "identity_fp32", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 4], raw: new Uint8Array(12) } satisfies RawCaseTensor] },
    expect: { error: "INVALID_ARG", message: /byte size mismatch.*Expected 16, got 12/ },
  },
];

/** Registers the case table as a vitest suite against one server, once per transport given. */
export function describeProtocolCases(
  suiteName: string, serverOptions: StartOptions, makeTransports: (server: RunningServer) => ProtocolTransport[],
  transportKinds: readonly Pick<ProtocolTransport, "name" | "binary">[],
): void {
  describe(suiteName, () => {
    let server: RunningServer;
    let transports: ProtocolTransport[] = [];
    beforeAll(async () => {
      server = await startServer(serverOptions);
      transports = makeTransports(server);
    });
    afterAll(async () => {
      await server?.stop();
    });

    for (const { name: transportName, binary } of transportKinds) {
      describe(transportName, () => {
        const transport = (): ProtocolTransport => {
          const found = transports.find((t) => t.name === transportName);
          if (found === undefined) throw new Error(`no transport named ${transportName}`);
          return found;
        };
        // Deliberately malformed bytes can only be sent by a transport that carries raw bytes.
        const cases = PROTOCOL_CASES.filter((c) => binary || !c.request.inputs.some(isRawTensor));
        for (const testCase of cases) {
          it(testCase.name, async () => {
            if (testCase.binaryOnly && !binary) {
              // Text encodings cannot carry FP16/BF16: Triton refuses them outside binary, and so do we.
              expect(await transport().infer(testCase.request)).toMatchObject({ kind: "error", code: "INVALID_ARG" });
              return;
            }
            const result = await transport().infer(testCase.request);
            if ("error" in testCase.expect) {
              expect(result).toMatchObject({ kind: "error", code: testCase.expect.error });
              if (result.kind === "error") expect(result.message).toMatch(testCase.expect.message);
            } else {
              expect(result.kind, result.kind === "error" ? result.message : "").toBe("ok");
              if (result.kind !== "ok") return;
              expect(result.outputs.map((o) => o.name)).toEqual(testCase.expect.outputs.map((o) => o.name));
              testCase.expect.outputs.forEach((want, i) => {
                const got = result.outputs[i]!;
                expect(got.datatype).toBe(want.datatype);
                expect(got.shape).toEqual(want.shape);
                if (want.values !== undefined) expect(got.values).toEqual(want.values);
                else expect(got.values.every((v) => typeof v === "number" && Number.isFinite(v))).toBe(true);
              });
            }
          });
        }
        it("still serves a valid request after every case", async () => {
          const result = await transport().infer(PROTOCOL_CASES[0]!.request);
          expect(result.kind).toBe("ok");
          expect(server.process.exitCode).toBeNull();
        });
      });
    }
  });
}
