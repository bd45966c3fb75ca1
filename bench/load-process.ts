/**
 * Child process of `npm run bench`: one of several load generators against the same server (perf_analyzer runs its
 * load in native threads; one JS thread sending 600 KB requests nears a whole core at GPU rates). It sends the same
 * request, encoded once, at the concurrency it is asked for, and reports what it measured.
 */
import { InferenceClient } from "../client/index";
import { toFloat16Array } from "../protocol/float16";
import { preparedSender } from "../tools/perf/index";
import type { LoadProcessMessage, LoadProcessRequest, LoadProcessSettings } from "./load-process-protocol";
import { measureHere } from "./load-processes";

const settings = JSON.parse(process.argv[2] ?? "{}") as LoadProcessSettings;

function send(message: LoadProcessMessage): void {
  process.send?.(message);
}

function main(): void {
  const client = new InferenceClient({ url: settings.url });
  const values = Float32Array.from({ length: settings.inputShape.reduce((a, b) => a * b, 1) }, () => Math.random());
  const data = settings.inputDatatype === "FP16" ? toFloat16Array(values) : values;
  const sender = preparedSender(client, settings.model, [{ name: settings.inputName, datatype: settings.inputDatatype, shape: [...settings.inputShape], data }]);
  process.on("message", (request: LoadProcessRequest) => {
    measureHere(request, sender).then((measured) => send({ type: "measured", ...measured }), (error: unknown) => send({ type: "failed", message: (error as Error).message }));
  });
  process.on("disconnect", () => void client.close().finally(() => process.exit(0)));
  send({ type: "ready" });
}

main();
