import type { sendUnaryData } from "@grpc/grpc-js";
import type { RequestTrace, TraceSettingRequest } from "../../tracing/index";
import type { TraceSettingRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/TraceSettingRequest";

/**
 * Records a sampled gRPC request's receive timestamps. grpc-js hands a handler the whole decoded message, so
 * GRPC_WAITREAD_START and GRPC_WAITREAD_END are both the moment it does (Triton's span includes the wait for the
 * request, which it documents as not a useful measure anyway).
 */
export function traceGrpcReceive(trace: RequestTrace): void {
  const nowNs = process.hrtime.bigint();
  trace.timestamp("GRPC_WAITREAD_START", nowNs);
  trace.timestamp("GRPC_WAITREAD_END", nowNs);
}

/** Runs `send` (writing a response or a status) between GRPC_SEND_START and GRPC_SEND_END, then ends the trace. */
export function traceGrpcSend(trace: RequestTrace, send: () => void): void {
  trace.timestamp("GRPC_SEND_START", process.hrtime.bigint());
  send();
  trace.timestamp("GRPC_SEND_END", process.hrtime.bigint());
  trace.end();
}

/** A unary callback that traces its sending. */
export function tracedCallback<Response>(trace: RequestTrace, callback: sendUnaryData<Response>): sendUnaryData<Response> {
  return (...answer) => traceGrpcSend(trace, () => callback(...answer));
}

/** Triton's TraceSetting request: no settings is a read; an empty value list clears that setting. */
export function traceSettingRequestOf(message: TraceSettingRequest__Output): TraceSettingRequest | undefined {
  const entries = Object.entries(message.settings);
  if (entries.length === 0) return undefined;
  return new Map(entries.map(([key, { value }]) => [key, value.length === 0 ? null : value]));
}

/** The setting as TraceSettingResponse's map of string lists. */
export function traceSettingResponseOf(setting: Readonly<Record<string, string | string[]>>): { settings: Record<string, { value: string[] }> } {
  return { settings: Object.fromEntries(Object.entries(setting).map(([key, value]) => [key, { value: Array.isArray(value) ? value : [value] }])) };
}
