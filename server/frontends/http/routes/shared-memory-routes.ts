import type { FastifyPluginCallback } from "fastify";
import { CudaSharedMemory } from "../../shared-memory/cuda-shared-memory";
import { sharedMemoryRegistration } from "../shared-memory-requests";
import { objectBody } from "./object-body";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

type Region = { Params: { region: string } };

/** Triton's shared-memory group: system shared memory regions, and the CUDA shared memory paths (no CUDA regions here). */
export const sharedMemoryRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { sharedMemory, restrictions, maxInputBytes, crossSite }, done) => {
  restrictApiGroup(scope, "shared-memory", restrictions);
  // Every POST of this group registers or unregisters a region; GETs read status.
  scope.addHook("onRequest", crossSite.hook);
  scope.get("/v2/systemsharedmemory/status", () => sharedMemory.status());
  scope.get<Region>("/v2/systemsharedmemory/region/:region/status", (request) => sharedMemory.status(request.params.region));
  scope.post<Region & { Body: RawBody }>("/v2/systemsharedmemory/region/:region/register", async (request, reply) => {
    const { key, offset, byteSize } = sharedMemoryRegistration(await objectBody(request, maxInputBytes));
    await sharedMemory.register(request.params.region, key, offset, byteSize);
    return reply.code(200).send();
  });
  scope.post<Region>("/v2/systemsharedmemory/region/:region/unregister", async (request, reply) => {
    sharedMemory.refuseIfDisabled();
    await sharedMemory.unregister(request.params.region);
    return reply.code(200).send();
  });
  scope.post("/v2/systemsharedmemory/unregister", async (_request, reply) => {
    sharedMemory.refuseIfDisabled();
    await sharedMemory.unregister();
    return reply.code(200).send();
  });

  // CUDA shared memory: Triton's paths (so its API group can be restricted as in Triton), holding no region.
  const cuda = new CudaSharedMemory(sharedMemory);
  scope.get("/v2/cudasharedmemory/status", () => cuda.status());
  scope.get<Region>("/v2/cudasharedmemory/region/:region/status", (request) => cuda.status(request.params.region));
  scope.post("/v2/cudasharedmemory/region/:region/register", () => cuda.register());
  scope.post("/v2/cudasharedmemory/region/:region/unregister", (_request, reply) => {
    cuda.unregister();
    return reply.code(200).send();
  });
  scope.post("/v2/cudasharedmemory/unregister", (_request, reply) => {
    cuda.unregister();
    return reply.code(200).send();
  });
  done();
};
