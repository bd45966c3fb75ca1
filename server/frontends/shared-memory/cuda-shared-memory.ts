import { InferenceError } from "../../core/index";
import type { SystemSharedMemory } from "./system-shared-memory";

/**
 * Triton's CUDA shared memory extension on a server that never holds a CUDA region: status lists none, unregister
 * (every region, or a name) has nothing to drop and succeeds, as Triton's does for a name it does not know
 * (server src/shared_memory_manager.cc), so clients that clean up both kinds of shared memory finish; register is
 * refused. With client shared memory off, register and unregister answer as the system kind does.
 */
export class CudaSharedMemory {
  readonly #system: SystemSharedMemory;

  constructor(system: SystemSharedMemory) {
    this.#system = system;
  }

  /** Every region (none), or the one named: NOT_FOUND, as Triton answers for a region it does not hold. */
  status(name?: string): never[] {
    if (name === undefined || name === "") return [];
    throw new InferenceError("NOT_FOUND", `Unable to find cuda shared memory region: '${name}'`);
  }

  register(): never {
    this.#system.refuseIfDisabled();
    throw new InferenceError("UNSUPPORTED", "the CUDA shared memory extension is not supported by this server");
  }

  unregister(): void {
    this.#system.refuseIfDisabled();
  }
}
