import { describeProtocolCases } from "./protocol-cases";
import { httpTransport } from "./http-transport";

describeProtocolCases(
  "KServe v2 REST: shared protocol case table",
  {},
  (server) => [httpTransport(server.httpUrl, false), httpTransport(server.httpUrl, true)],
  [{ name: "http-json", binary: false }, { name: "http-binary", binary: true }],
);
