/**
 * What Triton's load API takes besides the model name (tritonclient's `load_model(config=..., files=...)`): a
 * model configuration used instead of the repository's `config.pbtxt`, and model files, by their path inside the
 * model directory (`1/model.onnx`; sent as Triton's `file:1/model.onnx` parameters). With files, `config` is required.
 */
export interface ModelLoadOverrides {
  /** A JSON model configuration: the text, or an object (a `modelConfig()` answer, changed) that is serialized. */
  readonly config?: string | object;
  readonly files?: Readonly<Record<string, Uint8Array>>;
}

/** The `config` parameter's text: as given, or the object serialized. */
export function loadConfigText(overrides: ModelLoadOverrides): string | undefined {
  const config = overrides.config;
  return config === undefined || typeof config === "string" ? config : JSON.stringify(config);
}
