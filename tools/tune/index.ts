/** inference-tune's public surface: what bench/ and the tests' helpers may use. Everything else is internal. */
export { CandidateServer } from "./candidate-server";
export { compareServedConfigs } from "./compare-served-configs";
export { type InferenceServerProcess, startInferenceServerProcess } from "./inference-server-process";
export { runInferenceTune } from "./run-inference-tune";
export { type ServiceProcess, startServiceProcess } from "./service-process";
export { parseTuneOptions } from "./tune-options";
export type { TuneSummary } from "./tune-summary";
export { defaultConcurrency, describeSettings } from "./tuned-settings";
