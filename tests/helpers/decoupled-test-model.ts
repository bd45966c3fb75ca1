import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * model.js of a decoupled TypeScript model for the end-to-end tests: input COUNT (INT32, one element), output OUT
 * (INT32, one element). By default it answers OUT = 0 .. COUNT-1 from timers, after execute() returned, the last
 * marked final (or, with parameter `final_alone: true`, the final flag sent alone after them). The parameter `behave`:
 * - `error`: OUT 0, an INVALID_ARG error response, OUT 2 final
 * - `throw`: OUT 0 and OUT 1, then execute() throws
 * - `exit`: OUT 0, then the worker thread exits (code 7) after execute() returned
 * - `after-final`: OUT 0 final, then tries one more send
 * - `endless`: one OUT every 5 ms until the request is cancelled
 * - `returns`: execute() returns a response array, as a model that is not decoupled would
 * What the model learns of its sender is written beside model.js as `<tag>.json` (parameter `tag`): for `endless`,
 * once it sees the request cancelled, how many it sent and whether a send then threw; for `after-final`, the
 * error the extra send threw.
 */
const STREAM_PROBE_JS = String.raw`
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const out = (i) => ({ outputs: { OUT: { datatype: "INT32", shape: [1], data: Int32Array.of(i) } } });

class StreamProbe {
  initialize(args) {
    this.dir = args.versionDirectory;
  }
  report(request, value) {
    fs.writeFileSync(path.join(this.dir, String(request.parameters.tag) + ".json"), JSON.stringify(value));
  }
  execute(requests) {
    if (requests.some((request) => request.parameters.behave === "returns")) return requests.map(() => out(0));
    for (const request of requests) {
      const sender = request.responseSender;
      const count = request.inputs.COUNT.data[0];
      const behave = request.parameters.behave;
      if (behave === "error") {
        sender.send(out(0));
        sender.send({ error: { code: "INVALID_ARG", message: "response 1 is refused" } });
        sender.send(out(2), { final: true });
      } else if (behave === "throw") {
        sender.send(out(0));
        sender.send(out(1));
        throw new Error("execute exploded mid-stream");
      } else if (behave === "exit") {
        sender.send(out(0));
        setTimeout(() => process.exit(7), 10);
      } else if (behave === "after-final") {
        sender.send(out(0), { final: true });
        try {
          sender.send(out(1));
          this.report(request, { threw: null });
        } catch (error) {
          this.report(request, { threw: error.message });
        }
      } else if (behave === "endless") {
        let sent = 0;
        const tick = () => {
          if (sender.isCancelled()) {
            let sendThrew = false;
            try { sender.send(out(sent)); } catch { sendThrew = true; }
            this.report(request, { sent, sendThrew });
            return;
          }
          sender.send(out(sent++));
          setTimeout(tick, 5);
        };
        tick();
      } else {
        const finalAlone = request.parameters.final_alone === true;
        let i = 0;
        const tick = () => {
          if (i === count) return sender.send(undefined, { final: true });
          sender.send(out(i), { final: !finalAlone && i === count - 1 });
          i++;
          if (finalAlone || i < count) setTimeout(tick, 1);
        };
        if (count === 0) sender.send(undefined, { final: true });
        else setTimeout(tick, 1);
      }
    }
  }
}
module.exports = StreamProbe;
`;

/**
 * Writes `<repository>/<name>` with the decoupled stream probe (one instance, no batching); with `decoupled: false`,
 * a model answering once, for requests with `behave: returns`.
 */
export function writeStreamProbeModel(repository: string, name: string, options: { readonly decoupled?: boolean } = {}): string {
  const dir = path.join(repository, name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), STREAM_PROBE_JS);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"',
    "max_batch_size: 0",
    'input [ { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    `model_transaction_policy { decoupled: ${options.decoupled ?? true} }`,
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n"));
  return path.join(dir, "1");
}
