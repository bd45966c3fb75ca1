import type { FastifyPluginCallback } from "fastify";
import { InferenceError } from "../../../core/index";
import { sharedMemoryRegistration } from "../shared-memory-requests";
import { objectBody } from "./object-body";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

type Region = { Params: { region: string } };

/** Triton's shared-memory group: system shared memory regions, and the CUDA shared memory paths it refuses. */
export const sharedMemoryRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { sharedMemory, restrictions, maxInputBytes }, done) => {
  restrictApiGroup(scope, "shared-memory", restrictions);
  scope.get("/v2/systemsharedmemory/status", () => sharedMemory.status());
  scope.get<Region>("/v2/systemsharedmemory/region/:region/status", (request) => sharedMemory.status(request.params.region));
  scope.post<Region & { Body: RawBody }>("/v2/systemsharedmemory/region/:region/register", async (request, reply) => {
    const { key, offset, byteSize } = sharedMemoryRegistration(await objectBody(request, maxInputBytes));
    await sharedMemory.register(request.params.region, key, offset, byteSize);
    return reply.code(200).send();
  });
  scope.post<Region>("/v2/systemsharedmemory/region/:region/unregister", async (request, reply) => {
    await sharedMemory.unregister(request.params.region);
    return reply.code(200).send();
  });
  scope.post("/v2/systemsharedmemory/unregister", async (_request, reply) => {
    await sharedMemory.unregister();
    return reply.code(200).send();
  });

  // CUDA shared memory is not implemented: Triton's paths, so its API group can be restricted as in Triton.
  const unsupported = (): never => {
    throw new InferenceError("UNSUPPORTED", "the CUDA shared memory extension is not supported by this server");
  };
  scope.get("/v2/cudasharedmemory/status", unsupported);
  scope.get("/v2/cudasharedmemory/region/:region/status", unsupported);
  scope.post("/v2/cudasharedmemory/region/:region/register", unsupported);
  scope.post("/v2/cudasharedmemory/region/:region/unregister", unsupported);
  scope.post("/v2/cudasharedmemory/unregister", unsupported);
  done();
};
