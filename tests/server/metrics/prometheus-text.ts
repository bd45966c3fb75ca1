/** One sample line of a Prometheus text exposition. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed Prometheus text exposition (format 0.0.4). */
export interface Exposition {
  /** `# TYPE` of each metric family. */
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
  /** Samples of series `name` whose labels include `labels`. */
  select(name: string, labels?: Readonly<Record<string, string>>): Sample[];
  /** The value of the one series `name` whose labels include `labels`; throws when none or several match. */
  value(name: string, labels?: Readonly<Record<string, string>>): number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const SPECIAL_VALUES: Readonly<Record<string, number>> = { "+Inf": Infinity, "-Inf": -Infinity, NaN: NaN };
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses exposition text strictly enough for tests: a line that is neither comment nor sample throws. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith("# HELP ")) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(LABEL_PAIR)) labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: match[1]!, labels, value: SPECIAL_VALUES[match[3]!] ?? Number(match[3]) });
  }
  const select = (name: string, labels: Readonly<Record<string, string>> = {}): Sample[] =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    types,
    samples,
    select,
    value(name, labels = {}) {
      const found = select(name, labels);
      if (found.length !== 1) throw new Error(`${found.length} series match ${name}${JSON.stringify(labels)}`);
      return found[0]!.value;
    },
  };
}
