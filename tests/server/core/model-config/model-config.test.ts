import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { modelConfigToJson } from "../../../../server/core/model-config/config-json";
import { modelConfigFromMessage } from "../../../../server/core/model-config/defaults";
import type { ModelConfig } from "../../../../server/core/model-config/model-config";
import { modelConfigFromJson, parseModelConfigText } from "../../../../server/core/model-config/parse";
import { modelConfigSchema } from "../../../../server/core/model-config/schema";

const TRITON_CONFIGS_DIR = path.resolve(__dirname, "../../../../../shared/data/triton-configs");
const TRITON_MODEL_NAMES = fs.readdirSync(TRITON_CONFIGS_DIR).sort();

function readTritonConfig(modelName: string): ModelConfig {
  const text = fs.readFileSync(path.join(TRITON_CONFIGS_DIR, modelName, "config.pbtxt"), "utf8");
  return parseModelConfigText(text, `model '${modelName}': config.pbtxt`);
}

/** Sets every message of ModelConfig except the other two scheduling choices. */
const DYNAMIC_BATCHING_EVERYTHING_PBTXT = `
name: "everything_dynamic"
platform: "onnxruntime_onnx"
backend: "onnxruntime"
runtime: "libtriton_onnxruntime.so"
version_policy { specific { versions: [ 1, 3 ] } }
max_batch_size: 4
input [
  {
    name: "IMAGE"
    data_type: TYPE_UINT8
    format: FORMAT_NHWC
    dims: [ -1, -1, 3 ]
    reshape { shape: [ 1, -1, -1, 3 ] }
    allow_ragged_batch: true
    optional: true
  }
]
output [
  {
    name: "SCORES"
    data_type: TYPE_FP16
    dims: [ 1000 ]
    reshape { shape: [ ] }
    label_filename: "labels.txt"
    is_non_linear_format_io: true
  }
]
batch_input [
  { kind: BATCH_ITEM_SHAPE target_name: [ "SHAPES" ] data_type: TYPE_INT32 source_input: [ "IMAGE" ] }
]
batch_output [
  { target_name: [ "SCORES" ] kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: [ "IMAGE" ] }
]
optimization {
  graph { level: -1 }
  priority: PRIORITY_MAX
  cuda {
    graphs: true
    busy_wait_events: true
    graph_spec [
      {
        batch_size: 2
        input { key: "IMAGE" value { dim: [ 224, 224, 3 ] } }
        graph_lower_bound { batch_size: 1 input { key: "IMAGE" value { dim: [ 112, 112, 3 ] } } }
      }
    ]
    output_copy_stream: true
  }
  execution_accelerators {
    gpu_execution_accelerator: [ { name: "tensorrt" parameters { key: "precision_mode" value: "FP16" } } ]
    cpu_execution_accelerator: [ { name: "openvino" } ]
  }
  input_pinned_memory { enable: false }
  output_pinned_memory { enable: true }
  gather_kernel_buffer_threshold: 2
  eager_batching: true
}
dynamic_batching {
  preferred_batch_size: [ 2, 4 ]
  max_queue_delay_microseconds: 100
  preserve_ordering: true
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy {
    timeout_action: DELAY
    default_timeout_microseconds: 5000
    allow_timeout_override: true
    max_queue_size: 16
  }
  priority_queue_policy { key: 2 value { max_queue_size: 8 } }
}
instance_group [
  {
    name: "gpu_group"
    kind: KIND_GPU
    count: 2
    rate_limiter { resources [ { name: "R1" global: true count: 2 } ] priority: 3 }
    gpus: [ 0, 1 ]
    secondary_devices [ { kind: KIND_NVDLA device_id: 7 } ]
    profile: [ "0" ]
    host_policy: "gpu_0"
  }
]
default_model_filename: "model.onnx"
cc_model_filenames { key: "7.5" value: "model_t4.onnx" }
metric_tags { key: "team" value: "vision" }
parameters { key: "intra_op_thread_count" value { string_value: "1" } }
model_warmup [
  {
    name: "zeros"
    batch_size: 2
    inputs { key: "IMAGE" value { data_type: TYPE_UINT8 dims: [ 224, 224, 3 ] zero_data: true } }
    count: 3
  }
]
model_operations { op_library_filename: [ "libcustom_ops.so" ] }
model_transaction_policy { decoupled: true }
model_repository_agents { agents [ { name: "checksum" parameters { key: "MD5:model.onnx" value: "abc" } } ] }
response_cache { enable: true }
model_metrics {
  metric_control [
    {
      metric_identifier { family: "nv_inference_first_response_histogram_ms" }
      histogram_options { buckets: [ 0.5, 1, 2.5 ] }
    }
  ]
}
`;

/** The sequence batcher's messages (state, initial state, direct strategy, every control value list). */
const SEQUENCE_EVERYTHING_PBTXT = `
name: "everything_sequence"
version_policy { all { } }
max_batch_size: 2
sequence_batching {
  direct { max_queue_delay_microseconds: 50 minimum_slot_utilization: 0.1 }
  max_sequence_idle_microseconds: 5000000
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1.5 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END bool_false_true: [ false, true ] } ] }
  ]
  state [
    {
      input_name: "STATE_IN"
      output_name: "STATE_OUT"
      data_type: TYPE_FP32
      dims: [ -1, 8 ]
      initial_state [ { data_type: TYPE_FP32 dims: [ 4, 8 ] zero_data: false name: "zeros" } ]
      use_same_buffer_for_input_output: true
      use_growable_memory: true
    }
  ]
  iterative_sequence: true
}
model_warmup [
  { name: "random" batch_size: 1 inputs { key: "A" value { data_type: TYPE_INT64 dims: [ 3 ] random_data: true } } },
  { name: "file" batch_size: 1 inputs { key: "A" value { data_type: TYPE_STRING dims: [ 1 ] input_data_file: "a.bin" } } }
]
`;

const INPUT_DEFAULTS = {
  format: "FORMAT_NONE",
  is_shape_tensor: false,
  allow_ragged_batch: false,
  optional: false,
  is_non_linear_format_io: false,
} as const;

const OUTPUT_DEFAULTS = { label_filename: "", is_shape_tensor: false, is_non_linear_format_io: false } as const;

const CONFIG_DEFAULTS = {
  name: "",
  platform: "",
  backend: "",
  runtime: "",
  max_batch_size: 0,
  input: [],
  output: [],
  batch_input: [],
  batch_output: [],
  instance_group: [],
  default_model_filename: "",
  cc_model_filenames: {},
  metric_tags: {},
  parameters: {},
  model_warmup: [],
} as const satisfies Partial<ModelConfig>;

describe("parseModelConfigText on Triton's example repository configs", () => {
  it("finds all 13 configs", () => {
    expect(TRITON_MODEL_NAMES).toHaveLength(13);
  });

  it.each(TRITON_MODEL_NAMES)("parses %s and keeps its name", (modelName) => {
    expect(readTritonConfig(modelName).name).toBe(modelName);
  });

  it("reads densenet_onnx's platform, shapes, reshape and label file", () => {
    const config = readTritonConfig("densenet_onnx");
    expect(config.platform).toBe("onnxruntime_onnx");
    expect(config.max_batch_size).toBe(0);
    expect(config.input).toEqual([
      {
        ...INPUT_DEFAULTS,
        name: "data_0",
        data_type: "TYPE_FP32",
        format: "FORMAT_NCHW",
        dims: [3, 224, 224],
        reshape: { shape: [1, 3, 224, 224] },
      },
    ]);
    expect(config.output).toEqual([
      {
        ...OUTPUT_DEFAULTS,
        name: "fc6_1",
        data_type: "TYPE_FP32",
        dims: [1000],
        reshape: { shape: [1, 1000, 1, 1] },
        label_filename: "densenet_labels.txt",
      },
    ]);
  });

  it("reads simple's two INT32 inputs of 16 with every default and no reshape or scheduler", () => {
    const config = readTritonConfig("simple");
    expect(config).toStrictEqual({
      ...CONFIG_DEFAULTS,
      name: "simple",
      platform: "onnxruntime_onnx",
      max_batch_size: 8,
      input: ["INPUT0", "INPUT1"].map((name) => ({ ...INPUT_DEFAULTS, name, data_type: "TYPE_INT32", dims: [16] })),
      output: ["OUTPUT0", "OUTPUT1"].map((name) => ({ ...OUTPUT_DEFAULTS, name, data_type: "TYPE_INT32", dims: [16] })),
    });
  });

  it("reads simple_sequence's control inputs and leaves the strategy unset", () => {
    const batching = readTritonConfig("simple_sequence").sequence_batching;
    const control = (kind: string): unknown => ({
      kind,
      int32_false_true: [0, 1],
      fp32_false_true: [],
      bool_false_true: [],
      data_type: "TYPE_INVALID",
    });
    expect(batching).toStrictEqual({
      max_sequence_idle_microseconds: 0,
      control_input: [
        { name: "START", control: [control("CONTROL_SEQUENCE_START")] },
        { name: "READY", control: [control("CONTROL_SEQUENCE_READY")] },
      ],
      state: [],
      iterative_sequence: false,
    });
  });

  it("reads simple_dyna_sequence's oldest strategy, CORRID control, parameters and instance group", () => {
    const config = readTritonConfig("simple_dyna_sequence");
    const batching = config.sequence_batching;
    expect(batching?.max_sequence_idle_microseconds).toBe(10_000_000);
    expect(batching?.oldest).toEqual({
      max_candidate_sequences: 1024,
      preferred_batch_size: [],
      max_queue_delay_microseconds: 10_000,
      preserve_ordering: false,
    });
    expect(batching?.control_input.map((input) => input.name)).toEqual(["START", "END", "READY", "CORRID"]);
    expect(batching?.control_input[3]?.control).toEqual([
      {
        kind: "CONTROL_SEQUENCE_CORRID",
        int32_false_true: [],
        fp32_false_true: [],
        bool_false_true: [],
        data_type: "TYPE_UINT64",
      },
    ]);
    expect(config.parameters).toEqual({ execute_delay_ms: { string_value: "3" } });
    expect(config.instance_group).toEqual([
      { name: "", kind: "KIND_CPU", count: 2, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: "" },
    ]);
  });

  it("reads the ensemble's steps, latest-version markers and tensor maps", () => {
    const config = readTritonConfig("preprocess_resnet50_ensemble");
    expect(config.platform).toBe("ensemble");
    expect(config.ensemble_scheduling).toStrictEqual({
      step: [
        {
          model_name: "image_preprocess_nchw_3x224x224_inception",
          model_version: -1,
          input_map: { INPUT: "INPUT" },
          output_map: { OUTPUT: "preprocessed_image" },
          model_namespace: "",
        },
        {
          model_name: "resnet50_netdef",
          model_version: -1,
          input_map: { "gpu_0/data": "preprocessed_image" },
          output_map: { "gpu_0/softmax": "OUTPUT" },
          model_namespace: "",
        },
      ],
      max_inflight_requests: 0,
    });
  });

  it("reads a map written as a list of entries, a BYTES input and a python backend", () => {
    expect(readTritonConfig("image_preprocess_nchw_3x224x224_inception").parameters).toEqual({
      format: { string_value: "NCHW" },
      scaling: { string_value: "INCEPTION" },
    });
    const identity = readTritonConfig("simple_identity");
    expect(identity.backend).toBe("python");
    expect(identity.input[0]).toMatchObject({ data_type: "TYPE_STRING", dims: [-1] });
  });

  it("reads the TensorFlow and Caffe2 configs' formats and output names", () => {
    expect(readTritonConfig("inception_graphdef").input[0]).toMatchObject({ format: "FORMAT_NHWC", dims: [299, 299, 3] });
    expect(readTritonConfig("resnet50_graphdef").output[0]?.name).toBe("resnet_v1_50/predictions/Softmax");
    expect(readTritonConfig("resnet50_netdef").platform).toBe("caffe2_netdef");
  });
});

describe("parseModelConfigText presence and defaults", () => {
  it("keeps an empty dynamic_batching { } apart from an absent one", () => {
    const withBatching = parseModelConfigText("max_batch_size: 8\ndynamic_batching { }", "test");
    expect(withBatching.dynamic_batching).toStrictEqual({
      preferred_batch_size: [],
      max_queue_delay_microseconds: 0,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      priority_queue_policy: {},
    });
    const without = parseModelConfigText("max_batch_size: 8", "test");
    expect(without).not.toHaveProperty("dynamic_batching");
    expect(without).toStrictEqual({ ...CONFIG_DEFAULTS, max_batch_size: 8 });
  });

  it("fills every field of every message type", () => {
    const expected: ModelConfig = {
      name: "everything_dynamic",
      platform: "onnxruntime_onnx",
      backend: "onnxruntime",
      runtime: "libtriton_onnxruntime.so",
      version_policy: { specific: { versions: [1, 3] } },
      max_batch_size: 4,
      input: [
        {
          name: "IMAGE",
          data_type: "TYPE_UINT8",
          format: "FORMAT_NHWC",
          dims: [-1, -1, 3],
          reshape: { shape: [1, -1, -1, 3] },
          is_shape_tensor: false,
          allow_ragged_batch: true,
          optional: true,
          is_non_linear_format_io: false,
        },
      ],
      output: [
        {
          name: "SCORES",
          data_type: "TYPE_FP16",
          dims: [1000],
          reshape: { shape: [] },
          label_filename: "labels.txt",
          is_shape_tensor: false,
          is_non_linear_format_io: true,
        },
      ],
      batch_input: [{ kind: "BATCH_ITEM_SHAPE", target_name: ["SHAPES"], data_type: "TYPE_INT32", source_input: ["IMAGE"] }],
      batch_output: [{ target_name: ["SCORES"], kind: "BATCH_SCATTER_WITH_INPUT_SHAPE", source_input: ["IMAGE"] }],
      optimization: {
        graph: { level: -1 },
        priority: "PRIORITY_MAX",
        cuda: {
          graphs: true,
          busy_wait_events: true,
          graph_spec: [
            {
              batch_size: 2,
              input: { IMAGE: { dim: [224, 224, 3] } },
              graph_lower_bound: { batch_size: 1, input: { IMAGE: { dim: [112, 112, 3] } } },
            },
          ],
          output_copy_stream: true,
        },
        execution_accelerators: {
          gpu_execution_accelerator: [{ name: "tensorrt", parameters: { precision_mode: "FP16" } }],
          cpu_execution_accelerator: [{ name: "openvino", parameters: {} }],
        },
        input_pinned_memory: { enable: false },
        output_pinned_memory: { enable: true },
        gather_kernel_buffer_threshold: 2,
        eager_batching: true,
      },
      dynamic_batching: {
        preferred_batch_size: [2, 4],
        max_queue_delay_microseconds: 100,
        preserve_ordering: true,
        priority_levels: 2,
        default_priority_level: 1,
        default_queue_policy: {
          timeout_action: "DELAY",
          default_timeout_microseconds: 5000,
          allow_timeout_override: true,
          max_queue_size: 16,
        },
        priority_queue_policy: {
          "2": { timeout_action: "REJECT", default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 8 },
        },
      },
      instance_group: [
        {
          name: "gpu_group",
          kind: "KIND_GPU",
          count: 2,
          rate_limiter: { resources: [{ name: "R1", global: true, count: 2 }], priority: 3 },
          gpus: [0, 1],
          secondary_devices: [{ kind: "KIND_NVDLA", device_id: 7 }],
          profile: ["0"],
          passive: false,
          host_policy: "gpu_0",
        },
      ],
      default_model_filename: "model.onnx",
      cc_model_filenames: { "7.5": "model_t4.onnx" },
      metric_tags: { team: "vision" },
      parameters: { intra_op_thread_count: { string_value: "1" } },
      model_warmup: [
        {
          name: "zeros",
          batch_size: 2,
          inputs: { IMAGE: { data_type: "TYPE_UINT8", dims: [224, 224, 3], zero_data: true } },
          count: 3,
        },
      ],
      model_operations: { op_library_filename: ["libcustom_ops.so"] },
      model_transaction_policy: { decoupled: true },
      model_repository_agents: { agents: [{ name: "checksum", parameters: { "MD5:model.onnx": "abc" } }] },
      response_cache: { enable: true },
      model_metrics: {
        metric_control: [
          {
            metric_identifier: { family: "nv_inference_first_response_histogram_ms" },
            histogram_options: { buckets: [0.5, 1, 2.5] },
          },
        ],
      },
    };
    expect(parseModelConfigText(DYNAMIC_BATCHING_EVERYTHING_PBTXT, "test")).toStrictEqual(expected);
  });

  it("fills the sequence batcher's messages and keeps only the set oneof members", () => {
    const config = parseModelConfigText(SEQUENCE_EVERYTHING_PBTXT, "test");
    expect(config.version_policy).toStrictEqual({ all: {} });
    expect(config.sequence_batching).toStrictEqual({
      direct: { max_queue_delay_microseconds: 50, minimum_slot_utilization: 0.1 },
      max_sequence_idle_microseconds: 5_000_000,
      control_input: [
        {
          name: "START",
          control: [
            {
              kind: "CONTROL_SEQUENCE_START",
              int32_false_true: [],
              fp32_false_true: [0, 1.5],
              bool_false_true: [],
              data_type: "TYPE_INVALID",
            },
          ],
        },
        {
          name: "END",
          control: [
            {
              kind: "CONTROL_SEQUENCE_END",
              int32_false_true: [],
              fp32_false_true: [],
              bool_false_true: [false, true],
              data_type: "TYPE_INVALID",
            },
          ],
        },
      ],
      state: [
        {
          input_name: "STATE_IN",
          output_name: "STATE_OUT",
          data_type: "TYPE_FP32",
          dims: [-1, 8],
          initial_state: [{ data_type: "TYPE_FP32", dims: [4, 8], zero_data: false, name: "zeros" }],
          use_same_buffer_for_input_output: true,
          use_growable_memory: true,
        },
      ],
      iterative_sequence: true,
    });
    expect(config.model_warmup.map((warmup) => warmup.inputs["A"])).toStrictEqual([
      { data_type: "TYPE_INT64", dims: [3], random_data: true },
      { data_type: "TYPE_STRING", dims: [1], input_data_file: "a.bin" },
    ]);
  });
});

describe("parseModelConfigText errors", () => {
  const source = "model 'x': config.pbtxt";

  it.each([
    ["an unknown field", 'name: "x"\nmax_batch_size: 1\nbogus: 1', "model 'x': config.pbtxt line 3: unknown field 'bogus'"],
    ["an unknown nested field", 'input [\n  {\n    name: "a"\n    shape: [ 1 ]\n  }\n]', "line 4: unknown field 'shape'"],
    ["a bad enum name", 'name: "x"\ninput [\n  { name: "a" data_type: TYPE_FLOAT }\n]', "line 3: enum value expected"],
    ["a syntax error", 'name: "x"\n\ninput [ { name: "a" ', "line 3: expected '}'"],
    ["a string where a number belongs", 'name: "x"\nmax_batch_size: "8"', "line 2: integer value expected"],
    ["an int32 out of range", "\nmax_batch_size: 99999999999", "line 2: integer value out of range"],
    ["a second scheduling choice", "dynamic_batching { }\nsequence_batching { }", "line 2: multiple values (scheduling_choice)"],
    ["a repeated singular field", 'name: "a"\nname: "b"', "line 2: multiple values (inference.ModelConfig.name)"],
  ])("names the source and line for %s", (_case, text, expectedMessage) => {
    expect(() => parseModelConfigText(text, source)).toThrow(expectedMessage);
    expect(() => parseModelConfigText(text, source)).toThrow(/^model 'x': config\.pbtxt line \d+: /);
  });
});

describe("modelConfigToJson", () => {
  it("prints simple exactly as Triton's GET /v2/models/simple/config (before Triton's own defaults)", () => {
    const tensorJson = (name: string, isInput: boolean): Record<string, unknown> =>
      isInput
        ? {
            name,
            data_type: "TYPE_INT32",
            format: "FORMAT_NONE",
            dims: [16],
            is_shape_tensor: false,
            allow_ragged_batch: false,
            optional: false,
            is_non_linear_format_io: false,
          }
        : {
            name,
            data_type: "TYPE_INT32",
            dims: [16],
            label_filename: "",
            is_shape_tensor: false,
            is_non_linear_format_io: false,
          };
    const expected = {
      name: "simple",
      platform: "onnxruntime_onnx",
      backend: "",
      runtime: "",
      max_batch_size: 8,
      input: [tensorJson("INPUT0", true), tensorJson("INPUT1", true)],
      output: [tensorJson("OUTPUT0", false), tensorJson("OUTPUT1", false)],
      batch_input: [],
      batch_output: [],
      instance_group: [],
      default_model_filename: "",
      cc_model_filenames: {},
      metric_tags: {},
      parameters: {},
      model_warmup: [],
    };
    const json = modelConfigToJson(readTritonConfig("simple"));
    // Same keys in the same (proto declaration) order as protobuf's printer.
    expect(JSON.stringify(json)).toBe(JSON.stringify(expected));
  });

  it("prints Triton's listed 64-bit fields as numbers and every other 64-bit field as a string", () => {
    const json = modelConfigToJson(parseModelConfigText(DYNAMIC_BATCHING_EVERYTHING_PBTXT, "test"));
    expect(json).toMatchObject({
      version_policy: { specific: { versions: [1, 3] } },
      input: [{ dims: [-1, -1, 3], reshape: { shape: [1, -1, -1, 3] } }],
      output: [{ dims: [1000], reshape: { shape: [] } }],
      dynamic_batching: {
        max_queue_delay_microseconds: 100,
        priority_levels: 2,
        default_priority_level: 1,
        default_queue_policy: { default_timeout_microseconds: 5000 },
        priority_queue_policy: { "2": { default_timeout_microseconds: 0 } },
      },
      model_warmup: [{ inputs: { IMAGE: { dims: [224, 224, 3] } } }],
      instance_group: [{ secondary_devices: [{ kind: "KIND_NVDLA", device_id: "7" }] }],
      optimization: {
        cuda: {
          graph_spec: [
            {
              input: { IMAGE: { dim: ["224", "224", "3"] } },
              graph_lower_bound: { input: { IMAGE: { dim: ["112", "112", "3"] } } },
            },
          ],
        },
      },
    });
    const sequenceJson = modelConfigToJson(parseModelConfigText(SEQUENCE_EVERYTHING_PBTXT, "test"));
    expect(sequenceJson).toMatchObject({
      sequence_batching: {
        direct: { max_queue_delay_microseconds: 50, minimum_slot_utilization: 0.1 },
        max_sequence_idle_microseconds: 5_000_000,
        state: [{ dims: [-1, 8], initial_state: [{ dims: [4, 8] }] }],
      },
    });
    expect(modelConfigToJson(readTritonConfig("preprocess_resnet50_ensemble"))).toMatchObject({
      ensemble_scheduling: { step: [{ model_version: -1 }, { model_version: -1 }] },
    });
  });

  it("prints only the set member of a oneof and leaves unset messages out", () => {
    const json = modelConfigToJson(parseModelConfigText(SEQUENCE_EVERYTHING_PBTXT, "test"));
    expect(Object.keys(json)).toContain("sequence_batching");
    expect(Object.keys(json)).not.toContain("dynamic_batching");
    expect(Object.keys(json)).not.toContain("optimization");
    const sequenceBatching = json["sequence_batching"] as Record<string, unknown>;
    expect(Object.keys(sequenceBatching)).not.toContain("oldest");
    const [state] = sequenceBatching["state"] as [{ initial_state: [Record<string, unknown>] }];
    expect(state.initial_state[0]).toMatchObject({ zero_data: false, name: "zeros" });
    expect(Object.keys(state.initial_state[0])).not.toContain("data_file");
  });
});

describe("round trips", () => {
  const everyConfig: [string, ModelConfig][] = [
    ...TRITON_MODEL_NAMES.map((name): [string, ModelConfig] => [name, readTritonConfig(name)]),
    ["everything_dynamic", parseModelConfigText(DYNAMIC_BATCHING_EVERYTHING_PBTXT, "test")],
    ["everything_sequence", parseModelConfigText(SEQUENCE_EVERYTHING_PBTXT, "test")],
  ];

  it.each(everyConfig)("%s survives modelConfigToJson -> JSON text -> modelConfigFromJson", (_name, config) => {
    const jsonText = JSON.stringify(modelConfigToJson(config));
    expect(modelConfigFromJson(JSON.parse(jsonText), "test")).toStrictEqual(config);
  });

  it.each(everyConfig)("%s survives encode -> decode through inference.ModelConfig", (_name, config) => {
    const { modelConfigType } = modelConfigSchema();
    const bytes = modelConfigType.encode(modelConfigType.fromObject(config)).finish();
    expect(modelConfigFromMessage(modelConfigType.decode(bytes), "test")).toStrictEqual(config);
  });
});

describe("modelConfigFromJson", () => {
  it("accepts 64-bit integers as numbers or strings and lowerCamelCase names", () => {
    const config = modelConfigFromJson(
      {
        name: "m",
        maxBatchSize: 2,
        input: [{ name: "x", data_type: "TYPE_FP32", dims: [1, "3", -1] }],
        dynamic_batching: {
          max_queue_delay_microseconds: "250",
          priority_queue_policy: { "1": { default_timeout_microseconds: 9 } },
        },
      },
      "test",
    );
    expect(config.max_batch_size).toBe(2);
    expect(config.input[0]?.dims).toEqual([1, 3, -1]);
    expect(config.dynamic_batching?.max_queue_delay_microseconds).toBe(250);
    expect(config.dynamic_batching?.priority_queue_policy["1"]?.default_timeout_microseconds).toBe(9);
  });

  it.each([
    ["an unknown field", { bogus: 1 }, "model 'x' load config: inference.ModelConfig: unknown field"],
    ["a bad enum name", { input: [{ data_type: "TYPE_FLOAT" }] }, "unknown enum value"],
    ["two scheduling choices", { dynamic_batching: {}, sequence_batching: {} }, "scheduling_choice"],
    ["a non-object", [1], "expected object"],
  ])("rejects %s with the source name", (_case, json, expectedMessage) => {
    expect(() => modelConfigFromJson(json, "model 'x' load config")).toThrow(expectedMessage);
    expect(() => modelConfigFromJson(json, "model 'x' load config")).toThrow(/^model 'x' load config: /);
  });

  it("rejects a 64-bit value JavaScript cannot hold exactly", () => {
    expect(() => modelConfigFromJson({ version_policy: { specific: { versions: ["9007199254740993"] } } }, "test")).toThrow(
      /^test: inference\.ModelVersionPolicy\.Specific\.versions: 9007199254740993 is not an integer/,
    );
  });
});
