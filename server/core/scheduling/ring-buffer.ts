/** FIFO queue on a growable circular array: O(1) push/shift without Array#shift's copying. */
export class RingBuffer<T> {
  #items: (T | undefined)[];
  #head = 0;
  #length = 0;

  constructor(initialCapacity = 16) {
    this.#items = new Array<T | undefined>(Math.max(2, initialCapacity));
  }

  get length(): number {
    return this.#length;
  }

  push(item: T): void {
    if (this.#length === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#length) % this.#items.length] = item;
    this.#length++;
  }

  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#items.length;
    this.#length--;
    return item;
  }

  /** The item `index` places behind the head, without removing it. */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.#length) return undefined;
    return this.#items[(this.#head + index) % this.#items.length];
  }

  /** Keeps only the items for which `keep` returns true, preserving order. */
  retain(keep: (item: T) => boolean): void {
    const kept: T[] = [];
    for (let i = 0; i < this.#length; i++) {
      const item = this.at(i) as T;
      if (keep(item)) kept.push(item);
    }
    this.#items = new Array<T | undefined>(Math.max(this.#items.length, 2));
    this.#head = 0;
    this.#length = 0;
    for (const item of kept) this.push(item);
  }

  #grow(): void {
    const bigger = new Array<T | undefined>(this.#items.length * 2);
    for (let i = 0; i < this.#length; i++) bigger[i] = this.#items[(this.#head + i) % this.#items.length];
    this.#items = bigger;
    this.#head = 0;
  }
}
