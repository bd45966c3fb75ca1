/** One use of a Grafana template variable inside a string (a PromQL expression or a variable query). */
export interface GrafanaVariableReference {
  /** The variable's name without syntax, e.g. `model` or `__rate_interval`. */
  readonly name: string;
  /** Where the reference starts in the string. */
  readonly index: number;
  /** The reference as written, e.g. `$model`, `${model:regex}` or `[[model]]`. */
  readonly text: string;
}

// Grafana's three syntaxes: $name, ${name} / ${name:format}, and the deprecated [[name]].
const REFERENCE = /\$\{([A-Za-z_]\w*)(?::\w+)?\}|\[\[([A-Za-z_]\w*)(?::\w+)?\]\]|\$([A-Za-z_]\w*)/g;

/** Every template-variable reference in `text`, in order. */
export function grafanaVariableReferences(text: string): GrafanaVariableReference[] {
  return [...text.matchAll(REFERENCE)].map((match) => ({
    name: match[1] ?? match[2] ?? match[3] ?? "",
    index: match.index,
    text: match[0],
  }));
}
