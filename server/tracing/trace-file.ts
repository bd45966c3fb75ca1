import fs from "node:fs";

export interface TraceFileOptions {
  /** Bytes handed to the file and not yet written; traces beyond it are dropped (and logged once). */
  readonly maxPendingBytes: number;
  readonly log: { warn(message: string): void };
}

/**
 * One trace file path, in Triton's format: `path` holds a JSON array that grows as traces are appended (closed
 * with `]` at shutdown), and `path.<index>` files each hold one group of traces as a complete array. Writes are
 * asynchronous and never throw; a failing file is logged once and later traces to it are dropped.
 */
export class TraceFile {
  readonly #path: string;
  readonly #options: TraceFileOptions;
  #stream: fs.WriteStream | undefined;
  #nextIndex = 0;
  /** Bytes of indexed files being written; the growing file's pending bytes are its stream's buffer. */
  #indexedPendingBytes = 0;
  readonly #writes = new Set<Promise<void>>();
  #warned = false;

  constructor(path: string, options: TraceFileOptions) {
    this.#path = path;
    this.#options = options;
  }

  /** Adds traces (JSON objects joined by commas) to the growing array in `path`. */
  append(objects: string): void {
    if (!this.#admit(objects.length)) return;
    if (this.#stream === undefined) {
      this.#stream = fs.createWriteStream(this.#path);
      this.#stream.on("error", (error) => this.#warn(`trace file '${this.#path}' failed: ${error.message}`));
      this.#stream.write(`[${objects}`);
    } else {
      this.#stream.write(`,${objects}`);
    }
  }

  /** Writes a group of traces as its own array to `path.<index>`, the index counting from 0. */
  writeIndexed(objects: string): void {
    if (!this.#admit(objects.length)) return;
    const name = `${this.#path}.${this.#nextIndex++}`;
    this.#indexedPendingBytes += objects.length;
    const write = fs.promises.writeFile(name, `[${objects}]`).catch((error: Error) => this.#warn(`trace file '${name}' failed: ${error.message}`))
      .finally(() => {
        this.#indexedPendingBytes -= objects.length;
        this.#writes.delete(write);
      });
    this.#writes.add(write);
  }

  /** Ends the growing array and waits for every write. */
  async close(): Promise<void> {
    const stream = this.#stream;
    if (stream !== undefined && !stream.destroyed) await new Promise<void>((resolve) => stream.end("]", () => resolve()));
    await Promise.all([...this.#writes]);
  }

  #admit(bytes: number): boolean {
    if (this.#stream?.destroyed === true) return false;
    const pendingBytes = (this.#stream?.writableLength ?? 0) + this.#indexedPendingBytes;
    if (pendingBytes + bytes <= this.#options.maxPendingBytes) return true;
    this.#warn(`trace file '${this.#path}' cannot keep up: dropping traces while ${pendingBytes} bytes wait to be written (--trace-max-pending-bytes)`);
    return false;
  }

  #warn(message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#options.log.warn(message);
  }
}
