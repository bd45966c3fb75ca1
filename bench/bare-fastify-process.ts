/**
 * Child process of `npm run bench`: the physical limit for a tiny model. A bare fastify app on the infer path
 * that reads the request body the way the server does (as bytes, any content type) and answers with fixed
 * bytes: the server's own response to the same request, headers included. No parsing, no model, no worker hop.
 */
import Fastify, { type FastifyReply } from "fastify";

interface BareResponse {
  readonly bodyBase64: string;
  readonly headers: Readonly<Record<string, string>>;
}

async function main(): Promise<void> {
  const response = JSON.parse(process.argv[2] ?? "{}") as BareResponse;
  const body = Buffer.from(response.bodyBase64, "base64");
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, payload, done) => done(null, payload));
  const answer = (_request: unknown, reply: FastifyReply): unknown => reply.headers(response.headers).send(body);
  app.post("/v2/models/:model/infer", answer);
  app.post("/v2/models/:model/versions/:version/infer", answer);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  process.stdout.write(`${JSON.stringify({ service: "bare-fastify", port: typeof address === "object" && address !== null ? address.port : 0 })}\n`);
  process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
}

void main();
