/** Where progress goes: a terminal (rewritten in place) or anything else (silent). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/**
 * A single status line rewritten in place on a terminal. On anything that is not a TTY (a pipe, a CI log) it
 * writes nothing, so captured output stays clean.
 */
export class ProgressLine {
  readonly #stream: ProgressStream;
  readonly #enabled: boolean;
  #shown = false;

  constructor(stream: ProgressStream) {
    this.#stream = stream;
    this.#enabled = stream.isTTY === true;
  }

  update(text: string): void {
    if (!this.#enabled) return;
    const width = Math.max(20, (this.#stream.columns ?? 100) - 1);
    this.#stream.write(`\r\u001b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.#shown = true;
  }

  /** Erases the line, before regular output is written. */
  clear(): void {
    if (!this.#shown) return;
    this.#stream.write("\r\u001b[2K");
    this.#shown = false;
  }
}
