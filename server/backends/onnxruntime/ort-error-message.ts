/**
 * Where ORT_ENFORCE / ORT_THROW say a failure happened: a build-machine source path with its line, then usually
 * the C++ function's signature, e.g. `/onnxruntime_src/onnxruntime/core/providers/cpu/math/element_wise_ops.h:583
 * void onnxruntime::BroadcastIterator::Append(ptrdiff_t, ptrdiff_t) `. A signature is only taken when it names a
 * qualified function (`a::b(...)`), so words of the message that follow a bare location stay.
 */
const SOURCE_LOCATION = /(?:\/[\w.+-]+)+\.(?:h|hh|hpp|c|cc|cpp|cxx|cu|cuh):\d+ (?:(?:[\w:<>,*&]+ ){0,3}?[\w<>~]+(?:::[\w<>~]+)+\([^()]*\)(?: const)? )?/g;

/**
 * An ONNX Runtime message as a client may read it: without the source locations and C++ signatures, which tell
 * about the server's build and nothing about the request. What ONNX Runtime says went wrong stays.
 */
export function publicOrtMessage(message: string): string {
  return message.replace(SOURCE_LOCATION, "").trim();
}
