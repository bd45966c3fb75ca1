"""Independent check of ModelStreamInfer on a decoupled model: Debian's python3-grpcio with stubs that
grpc_tools.protoc generated from protocol/proto, reading the stream as tritonclient's stream_infer does (one
request, responses until one carries triton_final_response true).

Usage: decoupled_stream_client.py STUBS_DIR HOST:PORT

Asks the example model text_generator for 5 tokens of "hello world" with triton_enable_empty_final_response set.
Prints one line per check and exits 1 on the first mismatch.
"""

import struct
import sys

from checks import check, fail


def bytes_element(raw):
    (length,) = struct.unpack("<I", raw[:4])
    return raw[4:4 + length]


def main():
    if len(sys.argv) != 3:
        fail("usage: decoupled_stream_client.py STUBS_DIR HOST:PORT")
    sys.path.insert(0, sys.argv[1])
    import grpc
    import grpc_service_pb2 as pb
    import grpc_service_pb2_grpc as pb_grpc

    request = pb.ModelInferRequest(model_name="text_generator", id="py-1")
    request.parameters["max_tokens"].int64_param = 5
    request.parameters["triton_enable_empty_final_response"].bool_param = True
    prompt = request.inputs.add(name="text_input", datatype="BYTES", shape=[1])
    prompt.contents.bytes_contents.append(b"hello world")

    channel = grpc.insecure_channel(sys.argv[2])
    stub = pb_grpc.GRPCInferenceServiceStub(channel)
    responses = []
    for response in stub.ModelStreamInfer(iter([request]), timeout=30):
        if response.error_message:
            fail(f"error response: {response.error_message}")
        responses.append(response.infer_response)
        if response.infer_response.parameters["triton_final_response"].bool_param:
            break
    tokens = responses[:-1]
    text = b"".join(bytes_element(r.raw_output_contents[0]) for r in tokens).decode()
    finals = [r.parameters["triton_final_response"].bool_param for r in tokens]
    check(len(tokens) == 5 and not any(finals) and all(r.id == "py-1" for r in tokens),
          f"{len(tokens)} responses, text '{text}', triton_final_response false on each")
    last = responses[-1]
    check(len(last.outputs) == 0 and last.parameters["triton_final_response"].bool_param,
          "the empty final response: no outputs, triton_final_response true")
    channel.close()
    print("all checks passed")


if __name__ == "__main__":
    main()
