import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  loadSync,
  type MessageTypeDefinition,
  type PackageDefinition,
  type ServiceDefinition,
} from "@grpc/proto-loader";
import { Reader } from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelConfigFromMessage } from "../../../../server/core/model-config/defaults";
import { parseModelConfigText } from "../../../../server/core/model-config/parse";
import { modelConfigSchema } from "../../../../server/core/model-config/schema";

/** Field numbers from Triton's model_config.proto (docs: triton-protocol.md section 4). */
const TRITON_FIELD_NUMBERS: Record<string, Record<string, number>> = {
  "inference.ModelConfig": {
    name: 1, platform: 2, backend: 17, runtime: 25, version_policy: 3, max_batch_size: 4, input: 5, output: 6,
    batch_input: 20, batch_output: 21, optimization: 12, dynamic_batching: 11, sequence_batching: 13,
    ensemble_scheduling: 15, instance_group: 7, default_model_filename: 8, cc_model_filenames: 9, metric_tags: 10,
    parameters: 14, model_warmup: 16, model_operations: 18, model_transaction_policy: 19, model_repository_agents: 23,
    response_cache: 24, model_metrics: 26,
  },
  "inference.ModelInput": {
    name: 1, data_type: 2, format: 3, dims: 4, reshape: 5, is_shape_tensor: 6, allow_ragged_batch: 7, optional: 8,
    is_non_linear_format_io: 9,
  },
  "inference.ModelOutput": {
    name: 1, data_type: 2, dims: 3, reshape: 5, label_filename: 4, is_shape_tensor: 6, is_non_linear_format_io: 7,
  },
  "inference.ModelInstanceGroup": {
    name: 1, kind: 4, count: 2, rate_limiter: 6, gpus: 3, secondary_devices: 8, profile: 5, passive: 7, host_policy: 9,
  },
  "inference.ModelVersionPolicy": { latest: 1, all: 2, specific: 3 },
  "inference.ModelDynamicBatching": {
    preferred_batch_size: 1, max_queue_delay_microseconds: 2, preserve_ordering: 3, priority_levels: 4,
    default_priority_level: 5, default_queue_policy: 6, priority_queue_policy: 7,
  },
  "inference.ModelQueuePolicy": {
    timeout_action: 1, default_timeout_microseconds: 2, allow_timeout_override: 3, max_queue_size: 4,
  },
  "inference.ModelSequenceBatching": {
    direct: 3, oldest: 4, max_sequence_idle_microseconds: 1, control_input: 2, state: 5, iterative_sequence: 6,
  },
  "inference.ModelEnsembling.Step": { model_name: 1, model_version: 2, input_map: 3, output_map: 4, model_namespace: 5 },
  "inference.ModelEnsembling": { step: 1, max_inflight_requests: 2 },
  "inference.ModelOptimizationPolicy": {
    graph: 1, priority: 2, cuda: 3, execution_accelerators: 4, input_pinned_memory: 5, output_pinned_memory: 6,
    gather_kernel_buffer_threshold: 7, eager_batching: 8,
  },
  "inference.ModelWarmup": { name: 1, batch_size: 2, inputs: 3, count: 4 },
  "inference.ModelParameter": { string_value: 1 },
  "inference.ModelTransactionPolicy": { decoupled: 1 },
  "inference.ModelResponseCache": { enable: 1 },
};

const TRITON_DATA_TYPE_NUMBERS = [
  "TYPE_INVALID", "TYPE_BOOL", "TYPE_UINT8", "TYPE_UINT16", "TYPE_UINT32", "TYPE_UINT64", "TYPE_INT8", "TYPE_INT16",
  "TYPE_INT32", "TYPE_INT64", "TYPE_FP16", "TYPE_FP32", "TYPE_FP64", "TYPE_STRING", "TYPE_BF16",
].map((name, number) => ({ name, number }));

interface DescriptorField {
  name: string;
  number: number;
}

interface MessageDescriptor {
  field: DescriptorField[];
  nestedType: (MessageDescriptor & { name: string })[];
}

/** proto-loader lists top-level messages only; nested ones (`ModelEnsembling.Step`) sit in `nestedType`. */
function messageFields(definition: PackageDefinition, fullName: string): DescriptorField[] {
  const [packageName, topLevelName, ...nestedNames] = fullName.split(".");
  const topLevel = definition[`${packageName}.${topLevelName}`] as MessageTypeDefinition<object, object>;
  let descriptor = topLevel.type as MessageDescriptor;
  for (const nestedName of nestedNames) {
    const nested = descriptor.nestedType.find((candidate) => candidate.name === nestedName);
    if (nested === undefined) throw new Error(`no nested message ${fullName}`);
    descriptor = nested;
  }
  return descriptor.field;
}

function loadWithProtoLoader(protoPath: string, includeDirs: string[]): PackageDefinition {
  return loadSync(protoPath, { keepCase: true, includeDirs });
}

describe("model_config.proto under @grpc/proto-loader (keepCase)", () => {
  const { protoDirectory, protoPath } = modelConfigSchema();
  const definition = loadWithProtoLoader(protoPath, [protoDirectory]);

  it.each(Object.entries(TRITON_FIELD_NUMBERS))("gives %s Triton's field names and numbers", (messageName, numbers) => {
    const actual = Object.fromEntries(messageFields(definition, messageName).map((field) => [field.name, field.number]));
    expect(actual).toEqual(numbers);
  });

  it("gives DataType Triton's value numbers", () => {
    const descriptor = (definition["inference.DataType"] as { type: { value: DescriptorField[] } }).type;
    expect(descriptor.value.map(({ name, number }) => ({ name, number }))).toEqual(TRITON_DATA_TYPE_NUMBERS);
  });
});

describe("a gRPC service proto that imports model_config.proto", () => {
  let serviceDirectory: string;

  beforeAll(() => {
    serviceDirectory = fs.mkdtempSync(path.join(os.tmpdir(), "model-config-proto-"));
    fs.writeFileSync(
      path.join(serviceDirectory, "config_echo.proto"),
      [
        'syntax = "proto3";',
        "package test;",
        'import "model_config.proto";',
        "message ModelConfigResponse { inference.ModelConfig config = 1; }",
        "service ConfigEcho { rpc Echo(ModelConfigResponse) returns (ModelConfigResponse); }",
      ].join("\n"),
    );
  });

  afterAll(() => {
    fs.rmSync(serviceDirectory, { recursive: true, force: true });
  });

  it("serializes a ModelConfig that our protobufjs type decodes back to the same config", () => {
    const { protoDirectory, modelConfigType } = modelConfigSchema();
    const servicePath = path.join(serviceDirectory, "config_echo.proto");
    const definition = loadWithProtoLoader(servicePath, [serviceDirectory, protoDirectory]);
    const echo = (definition["test.ConfigEcho"] as ServiceDefinition)["Echo"];
    const config = parseModelConfigText(
      'name: "m"\nmax_batch_size: 4\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ -1, 3 ] } ]\n' +
        "dynamic_batching { max_queue_delay_microseconds: 100\n" +
        "  priority_queue_policy { key: 2 value { max_queue_size: 8 } } }",
      "test",
    );
    const response = Reader.create(echo?.requestSerialize({ config }) ?? Buffer.alloc(0));
    // The response's field 1 (length-delimited) is the embedded ModelConfig.
    expect(response.uint32()).toBe((1 << 3) | 2);
    expect(modelConfigFromMessage(modelConfigType.decode(response.bytes()), "test")).toStrictEqual(config);
  });
});

