import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { InferenceError } from "../../../../server/core/index";
import { grpcErrorOf } from "../../../../server/frontends/grpc/grpc-status";

describe("grpcErrorOf", () => {
  it("keeps a short message as it is", () => {
    expect(grpcErrorOf(new InferenceError("NOT_FOUND", "Request for unknown model: 'x' is not found"))).toEqual({
      code: status.NOT_FOUND, details: "Request for unknown model: 'x' is not found",
    });
  });

  it("cuts any message to at most 4096 characters once percent-encoded for the trailer, non-ASCII included", () => {
    for (const text of ["x".repeat(30000), "é".repeat(30000), "😀".repeat(30000)]) {
      const { details } = grpcErrorOf(new InferenceError("INVALID_ARG", text));
      expect(encodeURI(details).length).toBeLessThanOrEqual(4096);
      expect(details).toMatch(/…\(\d+ chars\)$/);
    }
  });
});
