export const METRICS_PATH = "/metrics";

/** What the metrics endpoint's thread is started with. */
export interface MetricsEndpointData {
  readonly host: string;
  readonly port: number;
  readonly contentType: string;
}

/** From the endpoint's thread to the main thread. */
export type EndpointMessage =
  | { readonly kind: "listening"; readonly address: string; readonly port: number }
  | { readonly kind: "listen-failed"; readonly message: string; readonly code: string | undefined }
  /** A GET or HEAD of /metrics arrived: answer with {@link ExpositionMessage} of the same id. */
  | { readonly kind: "scrape"; readonly id: number }
  | { readonly kind: "closed" };

/** From the main thread to the endpoint's thread. */
export type MainMessage =
  | { readonly kind: "exposition"; readonly id: number; readonly text: string }
  | { readonly kind: "exposition-failed"; readonly id: number; readonly message: string }
  | { readonly kind: "close" };

export type ExpositionMessage = Extract<MainMessage, { kind: "exposition" | "exposition-failed" }>;
