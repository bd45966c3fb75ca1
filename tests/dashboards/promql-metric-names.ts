// Words that PromQL reserves: operators, modifiers, grouping keywords, aggregations and functions. Anything
// else in metric-name position is a metric name.
const AGGREGATIONS = ["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"];
const KEYWORDS = ["and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "atan2", "inf", "nan", "start", "end"];
const RESERVED_WORDS = new Set([...AGGREGATIONS, ...KEYWORDS]);

const STRING_LITERAL = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const LABEL_MATCHERS = /\{[^}]*\}/g;
const RANGES_AND_SUBQUERIES = /\[[^\]]*\]/g;
const GROUPING_LABEL_LISTS = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi;
// Numbers (including 1e-9 and durations such as 5m) are matched first so their letters are never names;
// an identifier followed by "(" is a function call.
const TOKEN = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z]*|([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g;

/**
 * The metric names a PromQL expression selects, sorted and without duplicates. Label names (inside `{}`
 * and grouping clauses), strings, durations, numbers, functions and keywords are not metric names.
 */
export function promqlMetricNames(expr: string): string[] {
  const selectorsOnly = expr
    .replace(STRING_LITERAL, '""')
    .replace(LABEL_MATCHERS, " ")
    .replace(RANGES_AND_SUBQUERIES, " ")
    .replace(GROUPING_LABEL_LISTS, " ");
  const names = new Set<string>();
  for (const [, identifier, callParenthesis] of selectorsOnly.matchAll(TOKEN)) {
    if (identifier === undefined || callParenthesis !== undefined) continue;
    if (RESERVED_WORDS.has(identifier.toLowerCase())) continue;
    names.add(identifier);
  }
  return [...names].sort();
}
