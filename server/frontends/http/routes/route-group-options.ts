import type { preHandlerHookHandler } from "fastify";
import type { InferenceCore } from "../../../core/index";
import type { Tracer } from "../../../tracing/index";
import type { LogSettings } from "../../../logging/log-settings";
import type { ApiRestrictions } from "../../api-restrictions";
import type { CrossSiteGuard } from "../cross-site-guard";
import type { InferRequestDecoder } from "../json-request-decoder";
import type { SystemSharedMemory } from "../../shared-memory/system-shared-memory";

/** Every request body as its bytes (the server's one content-type parser); undefined when a request has none. */
export type RawBody = Buffer | undefined;

/** What each route group plugin is registered with (options rather than decorators: nothing else needs them). */
export interface RouteGroupOptions {
  readonly core: InferenceCore;
  /** Triton's --http-restricted-api: the groups that want a header, and its value. */
  readonly restrictions: ApiRestrictions;
  /** Triton's --http-max-input-size, which also bounds a decompressed body. */
  readonly maxInputBytes: number;
  /** A preHandler for routes whose answer may take long (inference, model loads): the client owes nothing then. */
  readonly working: preHandlerHookHandler;
  /** Samples inference requests for Triton's trace extension and owns its settings. */
  readonly tracer: Tracer;
  /** The root logger and its settings, which `/v2/logging` reads and changes. */
  readonly logSettings: LogSettings;
  /** The system shared memory regions, shared with the gRPC frontend. */
  readonly sharedMemory: SystemSharedMemory;
  /** Refuses what a browser on another site could send to the APIs that change the server. */
  readonly crossSite: CrossSiteGuard;
  /** Decodes infer and generate bodies, large JSON ones on worker threads; closed with the server. */
  readonly decoder: InferRequestDecoder;
}
