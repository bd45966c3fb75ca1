/**
 * Whether a request's client takes its responses as fast as they come: the frontend's side of a stream's flow
 * control. A frontend builds one over its connection's write buffer; the core lets a model's responses wait on it
 * and bounds how many are written while it is blocked.
 */
export interface ResponseFlow {
  /** True while the client has not taken what was already written to it (its connection's buffer is full). */
  readonly blocked: boolean;
  /** Calls `listener` once the client has taken what was written, or its connection closed (at once if not blocked). */
  whenUnblocked(listener: () => void): void;
}

/** How many responses one stream may have written while its client is blocked; beyond it the stream fails. */
export const DEFAULT_STREAM_BACKLOG = 1024;
