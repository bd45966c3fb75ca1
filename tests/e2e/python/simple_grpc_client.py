"""Independent check of the gRPC endpoint: Debian's python3-grpcio with stubs that grpc_tools.protoc generated from
protocol/proto, so neither our encoder nor our decoder is involved on the client side.

Usage: simple_grpc_client.py STUBS_DIR HOST:PORT

Checks that the generated messages carry Triton's field numbers, then calls ServerLive, ServerReady, Health/Check,
ModelMetadata, ModelConfig, ModelInfer (raw_input_contents and typed contents) and ModelStreamInfer on the
`simple` model (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1). Prints one line per check and exits 1 on the
first mismatch.
"""

import struct
import sys

from checks import check, fail

# Triton's field numbers (docs/triton-protocol.md section 3.2), written independently of our .proto file.
TRITON_FIELD_NUMBERS = {
    "ModelInferRequest": {"model_name": 1, "model_version": 2, "id": 3, "parameters": 4, "inputs": 5, "outputs": 6, "raw_input_contents": 7},
    "ModelInferRequest.InferInputTensor": {"name": 1, "datatype": 2, "shape": 3, "parameters": 4, "contents": 5},
    "ModelInferRequest.InferRequestedOutputTensor": {"name": 1, "parameters": 2},
    "ModelInferResponse": {"model_name": 1, "model_version": 2, "id": 3, "parameters": 4, "outputs": 5, "raw_output_contents": 6},
    "ModelInferResponse.InferOutputTensor": {"name": 1, "datatype": 2, "shape": 3, "parameters": 4, "contents": 5},
    "ModelStreamInferResponse": {"error_message": 1, "infer_response": 2},
    "InferParameter": {"bool_param": 1, "int64_param": 2, "string_param": 3, "double_param": 4, "uint64_param": 5},
    "InferTensorContents": {"bool_contents": 1, "int_contents": 2, "int64_contents": 3, "uint_contents": 4,
                            "uint64_contents": 5, "fp32_contents": 6, "fp64_contents": 7, "bytes_contents": 8},
    "ModelMetadataResponse": {"name": 1, "versions": 2, "platform": 3, "inputs": 4, "outputs": 5},
    "ModelMetadataResponse.TensorMetadata": {"name": 1, "datatype": 2, "shape": 3},
    "ModelStatistics": {"name": 1, "version": 2, "last_inference": 3, "inference_count": 4, "execution_count": 5,
                        "inference_stats": 6, "batch_stats": 7, "memory_usage": 8, "response_stats": 9},
    "RepositoryIndexResponse.ModelIndex": {"name": 1, "version": 2, "state": 3, "reason": 4},
}


def int32s(data):
    return list(struct.unpack(f"<{len(data) // 4}i", data))


def main():
    if len(sys.argv) != 3:
        fail("usage: simple_grpc_client.py STUBS_DIR HOST:PORT")
    sys.path.insert(0, sys.argv[1])
    import grpc
    import grpc_service_pb2 as pb
    import grpc_service_pb2_grpc as pb_grpc
    import health_pb2
    import health_pb2_grpc

    for path, numbers in TRITON_FIELD_NUMBERS.items():
        descriptor = pb.DESCRIPTOR.message_types_by_name[path.split(".")[0]]
        for nested in path.split(".")[1:]:
            descriptor = descriptor.nested_types_by_name[nested]
        actual = {name: descriptor.fields_by_name[name].number for name in numbers if name in descriptor.fields_by_name}
        check(actual == numbers, f"{path} field numbers are Triton's")

    channel = grpc.insecure_channel(sys.argv[2])
    stub = pb_grpc.GRPCInferenceServiceStub(channel)

    check(stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live, "ServerLive is true")
    check(stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready, "ServerReady is true")
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    check(health.status == health_pb2.HealthCheckResponse.SERVING, "Health/Check is SERVING")

    metadata = stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"), timeout=10)
    check(metadata.name == "simple" and metadata.platform == "onnxruntime_onnx", "ModelMetadata names simple on onnxruntime_onnx")
    check([(t.name, t.datatype, list(t.shape)) for t in metadata.inputs] == [("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])],
          "ModelMetadata inputs are INPUT0/INPUT1 INT32 [-1, 16]")

    config = stub.ModelConfig(pb.ModelConfigRequest(name="simple"), timeout=10).config
    check(config.max_batch_size == 8 and [list(i.dims) for i in config.input] == [[16], [16]], "ModelConfig has max_batch_size 8 and dims [16]")

    input0 = list(range(16))
    input1 = [1] * 16
    sums = [a + b for a, b in zip(input0, input1)]
    differences = [a - b for a, b in zip(input0, input1)]

    def request(raw, request_id):
        message = pb.ModelInferRequest(model_name="simple", id=request_id)
        for name, values in (("INPUT0", input0), ("INPUT1", input1)):
            tensor = message.inputs.add(name=name, datatype="INT32", shape=[1, 16])
            if raw:
                message.raw_input_contents.append(struct.pack("<16i", *values))
            else:
                tensor.contents.int_contents.extend(values)
        return message

    def check_sums(response, what):
        check(response.model_version == "1" and [o.name for o in response.outputs] == ["OUTPUT0", "OUTPUT1"], f"{what}: outputs and version")
        check([list(o.shape) for o in response.outputs] == [[1, 16], [1, 16]], f"{what}: output shapes [1, 16]")
        check(len(response.raw_output_contents) == 2, f"{what}: answered in raw_output_contents")
        check(int32s(response.raw_output_contents[0]) == sums, f"{what}: OUTPUT0 is INPUT0 + INPUT1")
        check(int32s(response.raw_output_contents[1]) == differences, f"{what}: OUTPUT1 is INPUT0 - INPUT1")

    raw_response = stub.ModelInfer(request(True, "raw"), timeout=30)
    check(raw_response.id == "raw", "ModelInfer (raw_input_contents) echoes the id")
    check_sums(raw_response, "ModelInfer (raw_input_contents)")
    check_sums(stub.ModelInfer(request(False, "typed"), timeout=30), "ModelInfer (typed int_contents)")

    streamed = list(stub.ModelStreamInfer(iter([request(True, "s1"), pb.ModelInferRequest(model_name="no_such_model", id="s2")]), timeout=30))
    check([r.infer_response.id for r in streamed] == ["s1", "s2"], "ModelStreamInfer answers both requests in order")
    check(streamed[0].error_message == "" and "no_such_model" in streamed[1].error_message, "ModelStreamInfer reports the failure in error_message")
    check_sums(streamed[0].infer_response, "ModelStreamInfer")

    # An image-sized tensor (resnet50's 602,112 bytes): gRPC's C core sends it in DATA frames as large as the
    # server's SETTINGS_MAX_FRAME_SIZE allows, not HTTP/2's default 16 KiB.
    image = struct.pack("<150528f", *(i % 251 / 251.0 for i in range(150528)))
    large = pb.ModelInferRequest(model_name="identity_fp32", id="image")
    large.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 150528])
    large.raw_input_contents.append(image)
    echoed = stub.ModelInfer(large, timeout=30)
    check(list(echoed.outputs[0].shape) == [1, 150528] and echoed.raw_output_contents[0] == image,
          "ModelInfer of a 602,112-byte FP32 tensor echoes it byte for byte")

    try:
        stub.ModelInfer(pb.ModelInferRequest(model_name="no_such_model"), timeout=10)
        fail("ModelInfer on an unknown model must fail")
    except grpc.RpcError as error:
        check(error.code() == grpc.StatusCode.NOT_FOUND, "ModelInfer on an unknown model is NOT_FOUND")

    print("all checks passed")


if __name__ == "__main__":
    main()
