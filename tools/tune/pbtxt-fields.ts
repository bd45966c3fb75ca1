/**
 * Where each field of a protobuf text-format document (config.pbtxt) lies in its text, so that single fields can be
 * edited without reformatting the rest: comments, order and layout stay as the user wrote them. It reads the
 * syntax only (no schema): `name: value`, `name { ... }`, `name < ... >`, `name [ v, v ]`, `#` comments, adjacent
 * string literals. The server's own parser (protobufjs against Triton's proto) checks the meaning.
 */

export interface TextRange {
  readonly start: number;
  /** Exclusive. */
  readonly end: number;
}

export type TextValue =
  | { readonly kind: "scalar"; readonly range: TextRange; readonly text: string }
  /** `range` covers the braces. */
  | { readonly kind: "message"; readonly range: TextRange; readonly fields: readonly TextField[] }
  | { readonly kind: "list"; readonly range: TextRange; readonly items: readonly TextValue[] };

export interface TextField {
  readonly name: string;
  /** From the first character of the name to the end of the value. */
  readonly range: TextRange;
  /** The end of the field including a trailing `,` or `;` separator. */
  readonly separatorEnd: number;
  readonly value: TextValue;
}

interface Token {
  readonly kind: "word" | "string" | "punctuation";
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

const PUNCTUATION = "{}[]<>:,;";
const WORD = /[\w.+-]+/y;

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === "\n") line++;
  return line;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (char === '"' || char === "'") {
      const start = i++;
      while (i < text.length && text[i] !== char && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
      if (text[i] !== char) throw new SyntaxError(`line ${lineOf(text, start)}: unterminated string`);
      i++;
      tokens.push({ kind: "string", text: text.slice(start, i), start, end: i });
    } else if (PUNCTUATION.includes(char)) {
      tokens.push({ kind: "punctuation", text: char, start: i, end: i + 1 });
      i++;
    } else {
      WORD.lastIndex = i;
      const match = WORD.exec(text);
      if (match === null) throw new SyntaxError(`line ${lineOf(text, i)}: unexpected '${char}'`);
      tokens.push({ kind: "word", text: match[0], start: i, end: i + match[0].length });
      i += match[0].length;
    }
  }
  return tokens;
}

class FieldParser {
  #position = 0;

  constructor(private readonly text: string, private readonly tokens: readonly Token[]) {}

  document(): TextField[] {
    const fields = this.#fields(undefined);
    if (this.#position < this.tokens.length) this.#fail(this.tokens[this.#position]!, "unexpected");
    return fields;
  }

  #peek(text: string): boolean {
    const token = this.tokens[this.#position];
    return token?.kind === "punctuation" && token.text === text;
  }

  #fail(token: Token | undefined, what: string): never {
    const where = token === undefined ? "end of text" : `'${token.text}'`;
    throw new SyntaxError(`line ${lineOf(this.text, token?.start ?? this.text.length)}: ${what} ${where}`);
  }

  #expect(text: string): Token {
    if (!this.#peek(text)) this.#fail(this.tokens[this.#position], `expected '${text}' at`);
    return this.tokens[this.#position++]!;
  }

  #fields(closer: string | undefined): TextField[] {
    const fields: TextField[] = [];
    while (this.#position < this.tokens.length && !(closer !== undefined && this.#peek(closer))) {
      const name = this.tokens[this.#position]!;
      if (name.kind !== "word") this.#fail(name, "expected a field name at");
      this.#position++;
      if (this.#peek(":")) this.#position++;
      const value = this.#value();
      let separatorEnd = value.range.end;
      if (this.#peek(",") || this.#peek(";")) separatorEnd = this.tokens[this.#position++]!.end;
      fields.push({ name: name.text, range: { start: name.start, end: value.range.end }, separatorEnd, value });
    }
    return fields;
  }

  #value(): TextValue {
    const token = this.tokens[this.#position];
    if (token === undefined) this.#fail(token, "expected a value at");
    if (token.kind === "punctuation" && (token.text === "{" || token.text === "<")) {
      this.#position++;
      const closer = token.text === "{" ? "}" : ">";
      const fields = this.#fields(closer);
      const close = this.#expect(closer);
      return { kind: "message", range: { start: token.start, end: close.end }, fields };
    }
    if (token.kind === "punctuation" && token.text === "[") {
      this.#position++;
      const items: TextValue[] = [];
      while (!this.#peek("]")) {
        items.push(this.#value());
        if (!this.#peek("]")) this.#expect(",");
      }
      const close = this.#expect("]");
      return { kind: "list", range: { start: token.start, end: close.end }, items };
    }
    if (token.kind === "punctuation") this.#fail(token, "expected a value at");
    let end = token.end;
    this.#position++;
    // Adjacent string literals are one value ("a" "b" is "ab").
    while (token.kind === "string" && this.tokens[this.#position]?.kind === "string") end = this.tokens[this.#position++]!.end;
    return { kind: "scalar", range: { start: token.start, end }, text: this.text.slice(token.start, end) };
  }
}

/** The top-level fields of a text-format document. Throws a `SyntaxError` naming the line for malformed text. */
export function scanTextFormat(text: string): TextField[] {
  return new FieldParser(text, tokenize(text)).document();
}

/** The messages a field holds: its message value, or the messages of its list value. */
export function messagesOf(field: TextField): Extract<TextValue, { kind: "message" }>[] {
  if (field.value.kind === "message") return [field.value];
  if (field.value.kind === "list") return field.value.items.filter((item) => item.kind === "message");
  return [];
}

/** A scalar's text with string quotes and simple escapes removed (`"a\"b"` -> `a"b`); other scalars as written. */
export function scalarValue(value: TextValue): string | undefined {
  if (value.kind !== "scalar") return undefined;
  const literals = value.text.match(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g);
  if (literals === null) return value.text;
  return literals.map((literal) => literal.slice(1, -1).replace(/\\(.)/g, "$1")).join("");
}
