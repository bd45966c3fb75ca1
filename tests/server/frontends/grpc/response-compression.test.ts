import { describe, expect, it } from "vitest";
import { compressionAlgorithm } from "../../../../server/frontends/grpc/response-compression";

describe("compressionAlgorithm(): gRPC C-core's choice for Triton's compression level", () => {
  it.each([
    ["none", "identity,deflate,gzip", undefined],
    ["low", "identity,deflate,gzip", "gzip"],
    ["medium", "identity,deflate,gzip", "deflate"],
    ["high", "identity,deflate,gzip", "deflate"],
    ["low", "identity,deflate", "deflate"],
    ["high", "identity,gzip", "gzip"],
    ["high", "identity", undefined],
    ["medium", undefined, undefined],
  ] as const)("%s with grpc-accept-encoding %s -> %s", (level, accept, want) => {
    expect(compressionAlgorithm(level, accept)).toBe(want);
  });
});
