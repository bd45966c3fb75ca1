import type { ServerInterceptingCallInterface, ServerMethodDefinition } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { checkGrpcCallInternals, grpcCallInternals } from "../../../../server/frontends/grpc/grpc-call-internals";
import { RequestBytesBudget } from "../../../../server/frontends/request-bytes-budget";

describe("grpc-js call internals", () => {
  it("are there in the installed @grpc/grpc-js", () => {
    expect(() => checkGrpcCallInternals()).not.toThrow();
  });

  it("fail a call loudly when grpc-js hands over a call without them", () => {
    const interceptor = grpcCallInternals(new RequestBytesBudget(1 << 20));
    const method = { path: "/inference.GRPCInferenceService/ModelInfer" } as ServerMethodDefinition<unknown, unknown>;
    const withoutDecoder = { serializeMessage: () => Buffer.alloc(0) } as unknown as ServerInterceptingCallInterface;
    expect(() => interceptor(method, withoutDecoder)).toThrow(/no longer has the call internals/);
  });
});
