import { type DataType, ELEMENT_BYTE_SIZE, type ErrorCode } from "../../server/core/index";
import { parseExactJson } from "../../server/frontends/http/exact-json";
import { type CaseRequest, type CaseResult, type CaseTensor, isRawTensor, type ProtocolTransport } from "./protocol-transport";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Case values -> little-endian bytes (BYTES length-prefixed), as the binary extension sends them. */
export function tensorBytes(datatype: DataType, values: CaseTensor["values"]): Uint8Array {
  if (datatype === "BYTES") {
    const parts = values.map((v) => encoder.encode(String(v)));
    const out = new Uint8Array(parts.reduce((n, p) => n + 4 + p.byteLength, 0));
    const view = new DataView(out.buffer);
    let offset = 0;
    for (const part of parts) {
      view.setUint32(offset, part.byteLength, true);
      out.set(part, offset + 4);
      offset += 4 + part.byteLength;
    }
    return out;
  }
  const size = ELEMENT_BYTE_SIZE[datatype];
  const out = new Uint8Array(values.length * size);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    const o = i * size;
    switch (datatype) {
      case "BOOL": view.setUint8(o, v ? 1 : 0); break;
      case "UINT8": view.setUint8(o, Number(v)); break;
      case "INT8": view.setInt8(o, Number(v)); break;
      case "UINT16": case "FP16": case "BF16": view.setUint16(o, Number(v), true); break;
      case "INT16": view.setInt16(o, Number(v), true); break;
      case "UINT32": view.setUint32(o, Number(v), true); break;
      case "INT32": view.setInt32(o, Number(v), true); break;
      case "FP32": view.setFloat32(o, Number(v), true); break;
      case "UINT64": view.setBigUint64(o, BigInt(v), true); break;
      case "INT64": view.setBigInt64(o, BigInt(v), true); break;
      case "FP64": view.setFloat64(o, Number(v), true); break;
    }
  });
  return out;
}

/** The inverse of {@link tensorBytes}. */
export function tensorValues(datatype: DataType, bytes: Uint8Array): CaseTensor["values"] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values: CaseTensor["values"][number][] = [];
  if (datatype === "BYTES") {
    for (let o = 0; o < bytes.byteLength;) {
      const n = view.getUint32(o, true);
      values.push(decoder.decode(bytes.subarray(o + 4, o + 4 + n)));
      o += 4 + n;
    }
    return values;
  }
  const readers: Record<Exclude<DataType, "BYTES">, [number, (o: number) => number | bigint | boolean]> = {
    BOOL: [1, (o) => view.getUint8(o) !== 0], UINT8: [1, (o) => view.getUint8(o)], INT8: [1, (o) => view.getInt8(o)],
    UINT16: [2, (o) => view.getUint16(o, true)], FP16: [2, (o) => view.getUint16(o, true)], BF16: [2, (o) => view.getUint16(o, true)],
    INT16: [2, (o) => view.getInt16(o, true)], UINT32: [4, (o) => view.getUint32(o, true)], INT32: [4, (o) => view.getInt32(o, true)],
    FP32: [4, (o) => view.getFloat32(o, true)], UINT64: [8, (o) => view.getBigUint64(o, true)], INT64: [8, (o) => view.getBigInt64(o, true)],
    FP64: [8, (o) => view.getFloat64(o, true)],
  };
  const [size, read] = readers[datatype];
  for (let o = 0; o + size <= bytes.byteLength; o += size) values.push(read(o));
  return values;
}

/** A binary-extension body: `header` as JSON, then the binary tensor data, with the header's length in its HTTP header. */
export function withBinary(header: unknown, binary: Uint8Array): { body: Buffer; headers: Record<string, string> } {
  const head = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([head, binary]), headers: { "inference-header-content-length": String(head.byteLength) } };
}

/** A binary request for a one-input model (INPUT0 `[1, count]`), asking for OUTPUT0 back as JSON or binary. */
export function binaryRequest(datatype: DataType, count: number, data: Uint8Array, outputBinary: boolean): { body: Buffer; headers: Record<string, string> } {
  return withBinary({
    inputs: [{ name: "INPUT0", datatype, shape: [1, count], parameters: { binary_data_size: data.byteLength } }],
    outputs: [{ name: "OUTPUT0", parameters: { binary_data: outputBinary } }],
  }, data);
}

function jsonValue(value: CaseTensor["values"][number]): string {
  return typeof value === "bigint" ? value.toString() : JSON.stringify(value);
}

function statusToCode(status: number): ErrorCode {
  return ({ 404: "NOT_FOUND", 503: "UNAVAILABLE", 501: "UNSUPPORTED", 500: "INTERNAL" } as Record<number, ErrorCode>)[status] ?? "INVALID_ARG";
}

/** Sends a case over KServe v2 REST: all tensors as JSON `data`, or all as binary tensor data. */
export function httpTransport(baseUrl: string, binary: boolean): ProtocolTransport {
  return {
    name: binary ? "http-binary" : "http-json",
    binary,
    async infer(request: CaseRequest): Promise<CaseResult> {
      const chunks: Uint8Array[] = [];
      const inputs = request.inputs.map((t) => {
        const head = `{"name":${JSON.stringify(t.name)},"datatype":"${t.datatype}","shape":${JSON.stringify(t.shape)}`;
        if (binary) {
          const bytes = isRawTensor(t) ? t.raw : tensorBytes(t.datatype, t.values);
          chunks.push(bytes);
          return `${head},"parameters":{"binary_data_size":${bytes.byteLength}}}`;
        }
        if (isRawTensor(t)) throw new Error("raw tensors need a binary transport");
        return `${head},"data":[${t.values.map(jsonValue).join(",")}]}`;
      });
      const outputs = (request.outputs ?? []).map((o) => ({
        name: o.name,
        parameters: { binary_data: binary, ...(o.classification !== undefined ? { classification: o.classification } : {}) },
      }));
      const header = JSON.stringify({
        ...(request.id !== undefined ? { id: request.id } : {}),
        parameters: { ...(request.parameters ?? {}), ...(binary && outputs.length === 0 ? { binary_data_output: true } : {}) },
        ...(outputs.length > 0 ? { outputs } : {}),
      }).replace(/^\{/, `{"inputs":[${inputs.join(",")}],`).replace(/,\}$/, "}");
      const headerBytes = encoder.encode(header);
      const body = Buffer.concat([headerBytes, ...chunks]);
      const url = `${baseUrl}/v2/models/${encodeURIComponent(request.model)}${request.version ? `/versions/${request.version}` : ""}/infer`;
      const response = await fetch(url, {
        method: "POST", body,
        headers: binary ? { "inference-header-content-length": String(headerBytes.byteLength), "content-type": "application/octet-stream" } : { "content-type": "application/json" },
      });
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (!response.ok) {
        const parsed = JSON.parse(decoder.decode(bytes)) as { error: string };
        return { kind: "error", code: statusToCode(response.status), message: parsed.error };
      }
      const headerLength = Number(response.headers.get("inference-header-content-length") ?? bytes.byteLength);
      const json = parseExactJson(decoder.decode(bytes.subarray(0, headerLength))) as {
        outputs: { name: string; datatype: DataType; shape: number[]; data?: CaseTensor["values"]; parameters?: { binary_data_size?: number } }[];
      };
      let offset = headerLength;
      return {
        kind: "ok",
        outputs: json.outputs.map((o) => {
          const size = o.parameters?.binary_data_size;
          if (size === undefined) {
            const values = (o.data ?? []).map((v) => (typeof v === "number" && (o.datatype === "INT64" || o.datatype === "UINT64") ? BigInt(v) : v));
            return { name: o.name, datatype: o.datatype, shape: o.shape, values };
          }
          const slice = bytes.subarray(offset, offset + size);
          offset += size;
          return { name: o.name, datatype: o.datatype, shape: o.shape, values: tensorValues(o.datatype, slice) };
        }),
      };
    },
  };
}
