import { describe, expect, it } from "vitest";
import type { BackendResponder, BackendResponse } from "../../../../server/backends/backend";
import { OpenStreams } from "../../../../server/backends/typescript/open-streams";
import { SEND_WINDOW } from "../../../../server/backends/typescript/typescript-worker-protocol";
import { WorkerResponseSender } from "../../../../server/backends/typescript/worker-response-sender";

/** A client on the main thread's side: takes responses, and is behind (not ready) while the test says so. */
class Client implements BackendResponder {
  readonly received: (BackendResponse | undefined)[] = [];
  behind = false;
  cancelled = false;
  #onReady: (() => void)[] = [];
  #onCancel: (() => void)[] = [];

  send(response: BackendResponse | undefined): void {
    this.received.push(response);
  }

  get ready(): boolean {
    return !this.behind;
  }

  onReady(listener: () => void): void {
    if (this.ready) listener();
    else this.#onReady.push(listener);
  }

  onCancel(listener: () => void): void {
    this.#onCancel.push(listener);
  }

  catchUp(): void {
    this.behind = false;
    for (const listener of this.#onReady.splice(0)) listener();
  }

  cancel(): void {
    this.cancelled = true;
    for (const listener of this.#onCancel.splice(0)) listener();
  }
}

/** Both sides of one decoupled request, joined as the worker's messages would join them (in order, at once). */
function streamPair(): { client: Client; sender: WorkerResponseSender } {
  const client = new Client();
  const streams = new OpenStreams();
  const wire = streams.open(client);
  const sender = new WorkerResponseSender(wire, (message) => streams.received(message), () => ({ outputs: [] }));
  return { client, sender };
}

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

const RESPONSE = { outputs: {} };

describe("a TypeScript model's sends and its client's progress (flow control across the worker boundary)", () => {
  it("settle at once while the client keeps up", async () => {
    const { client, sender } = streamPair();
    for (let i = 0; i < 3 * SEND_WINDOW; i++) expect(await settled(sender.send(RESPONSE))).toBe(true);
    expect(client.received).toHaveLength(3 * SEND_WINDOW);
  });

  it(`wait once the client is ${SEND_WINDOW} responses behind, and go on when it caught up`, async () => {
    const { client, sender } = streamPair();
    client.behind = true;
    const sends = Array.from({ length: SEND_WINDOW }, () => sender.send(RESPONSE));
    expect(await settled(sends[SEND_WINDOW - 2]!)).toBe(true);
    expect(await settled(sends[SEND_WINDOW - 1]!)).toBe(false);
    client.catchUp();
    expect(await settled(sends[SEND_WINDOW - 1]!)).toBe(true);
    expect(await settled(sender.send(RESPONSE))).toBe(true);
    expect(client.received).toHaveLength(SEND_WINDOW + 1);
  });

  it("wake a waiting send when the client cancels: the next send throws", async () => {
    const { client, sender } = streamPair();
    client.behind = true;
    const sends = Array.from({ length: SEND_WINDOW }, () => sender.send(RESPONSE));
    expect(await settled(sends.at(-1)!)).toBe(false);
    client.cancel();
    expect(await settled(sends.at(-1)!)).toBe(true);
    expect(sender.isCancelled()).toBe(true);
    expect(() => sender.send(RESPONSE)).toThrow("Unable to send response. The request was cancelled.");
  });

  it("never wait on the final flag", async () => {
    const { client, sender } = streamPair();
    client.behind = true;
    for (let i = 0; i < SEND_WINDOW - 1; i++) void sender.send(RESPONSE);
    expect(await settled(sender.send(undefined, { final: true }))).toBe(true);
    expect(client.received).toHaveLength(SEND_WINDOW);
  });
});
