import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OnnxGraphBuilder } from "../../../tools/model-builder/onnx-graph-builder";
import { loadOnnxSchema } from "../../../tools/model-builder/onnx-schema";

const SHARED_DATA_DIR = path.resolve(__dirname, "../../../../shared/data");

interface DecodedModel {
  ir_version: number;
  opset_import: { domain?: string; version: number }[];
  graph: {
    name: string;
    node: { op_type: string; input: string[]; output: string[]; attribute?: { name: string; type: number; f?: number; i?: number; ints?: number[] }[] }[];
    initializer?: { name: string; dims: number[]; data_type: number; raw_data: Uint8Array }[];
    input: { name: string; type: { tensor_type: { elem_type: number; shape: { dim: { dim_value?: number; dim_param?: string }[] } } } }[];
    output: { name: string }[];
  };
}

function decode(bytes: Uint8Array): DecodedModel {
  const { ModelProto } = loadOnnxSchema();
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number }) as DecodedModel;
}

function scaleModel(): OnnxGraphBuilder {
  const graph = new OnnxGraphBuilder("scale");
  const x = graph.addInput("x", "FLOAT", ["N", 3]);
  const w = graph.addInitializer("w", [3], new Float32Array([1.5, -2, 0.25]));
  graph.addNode({ opType: "Mul", inputs: [x, w], outputs: ["y"], attributes: { unused: { kind: "FLOAT", value: 0.5 } } });
  graph.addNode({ opType: "Flatten", inputs: ["y"], outputs: ["z"], attributes: { axis: { kind: "INT", value: 1 } } });
  graph.addOutput("z", "FLOAT", ["N", 3]);
  return graph;
}

describe("OnnxGraphBuilder", () => {
  it("writes a ModelProto whose graph, shapes, attributes and raw_data decode back as built", () => {
    const model = decode(scaleModel().toModelBytes());
    const { elementTypeCodes, attributeTypeCodes } = loadOnnxSchema();

    expect(model.ir_version).toBe(8);
    expect(model.opset_import).toEqual([{ domain: "", version: 17 }]);
    expect(model.graph.name).toBe("scale");
    expect(model.graph.input[0]?.type.tensor_type).toEqual({
      elem_type: elementTypeCodes.FLOAT,
      shape: { dim: [{ dim_param: "N" }, { dim_value: 3 }] },
    });
    expect(model.graph.node.map((node) => node.op_type)).toEqual(["Mul", "Flatten"]);
    expect(model.graph.node[1]?.attribute).toEqual([{ name: "axis", type: attributeTypeCodes.INT, i: 1 }]);
    expect(model.graph.node[0]?.attribute?.[0]?.f).toBe(0.5);

    const weight = model.graph.initializer?.[0];
    expect(weight?.dims).toEqual([3]);
    expect(weight?.data_type).toBe(elementTypeCodes.FLOAT);
    const raw = Buffer.from(weight?.raw_data ?? []);
    expect(Array.from(new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4))).toEqual([1.5, -2, 0.25]);
  });

  it("uses ONNX's own field numbers and type codes: it reads Triton's `simple` model.onnx", () => {
    const model = decode(fs.readFileSync(path.join(SHARED_DATA_DIR, "triton-configs/simple/1/model.onnx")));
    expect(model.graph.input.map((input) => input.name)).toEqual(["INPUT0", "INPUT1"]);
    expect(model.graph.output.map((output) => output.name)).toEqual(["OUTPUT0", "OUTPUT1"]);
    expect(model.graph.input[0]?.type.tensor_type.elem_type).toBe(loadOnnxSchema().elementTypeCodes.INT32);
    expect(model.graph.input[0]?.type.tensor_type.shape.dim[1]).toEqual({ dim_value: 16 });
    expect(model.graph.node.map((node) => node.op_type)).toContain("Sub");
  });

  it("rejects graphs ONNX Runtime could not load, naming the offending value", () => {
    const graph = new OnnxGraphBuilder("broken");
    graph.addInput("x", "FLOAT", [2]);
    expect(() => graph.addInput("x", "FLOAT", [2])).toThrow(/value x is defined twice/);
    expect(() => graph.addNode({ opType: "Relu", inputs: ["missing"], outputs: ["y"] })).toThrow(/undefined value missing/);
    expect(() => graph.addInitializer("w", [2, 2], new Float32Array(3))).toThrow(/3 values do not fill shape \[2,2\]/);
    graph.addOutput("never", "FLOAT", [2]);
    expect(() => graph.toModelBytes()).toThrow(/graph output never is never produced/);
  });

  it("serializes the same graph to the same bytes", () => {
    expect(scaleModel().toModelBytes().equals(scaleModel().toModelBytes())).toBe(true);
  });
});
