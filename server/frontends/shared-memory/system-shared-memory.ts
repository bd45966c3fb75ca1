import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { clipped, InferenceError, invalidArg } from "../../core/index";

/** Where POSIX shm_open(key) puts its objects on Linux: /dev/shm/<key without its leading slash>. */
const SHM_DIRECTORY = "/dev/shm";

/** A registered region, as the status endpoints show it. */
interface SharedMemoryRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byte_size: number;
}

/** Where a tensor lies: `byteSize` bytes at `offset` within the registered region `region`. */
export interface SharedMemoryReference {
  readonly region: string;
  readonly offset: number;
  readonly byteSize: number;
}

/** A request's hold on its place in one region: the file stays open until every lease is released. */
export interface SharedMemoryLease {
  read(): Promise<Uint8Array>;
  /** Writes `data` at the lease's place; the caller has checked it fits. */
  write(data: Uint8Array): Promise<void>;
  release(): void;
}

interface SystemSharedMemoryOptions {
  /**
   * Whether clients may register regions (--allow-client-shm). Off by default, as in Triton since 26.05: a region
   * lets a network client read and write a file of this host's /dev/shm.
   */
  readonly allowed: boolean;
  /** Most regions registered at once (--max-shared-memory-regions). */
  readonly maxRegions: number;
  /**
   * Most bytes one request may read from shared memory, all its inputs together (--max-shared-memory-input-bytes):
   * without mmap they are copied into the server's memory, as a request body is.
   */
  readonly maxInputBytes: number;
  /** Where keys are looked up; /dev/shm unless a test says otherwise. */
  readonly directory?: string;
}

interface Region extends SharedMemoryRegionStatus {
  readonly file: FileHandle;
  users: number;
  unregistered: boolean;
}

/** shm_open's name rules: one path component after any leading slashes, so the file lies directly in `directory`. */
function pathOf(directory: string, key: string): string | undefined {
  const name = key.replace(/^\/+/, "");
  if (name === "" || name.includes("/") || name === "." || name === ".." || name.includes("\0")) return undefined;
  const path = resolve(directory, name);
  return dirname(path) === resolve(directory) ? path : undefined;
}

/**
 * A key shm_open does not open (a name it refuses, no such object, a symbolic link): Triton answers INTERNAL
 * (server src/shared_memory_manager.cc, OpenSharedMemoryRegion), over HTTP a 500.
 */
function unableToOpen(key: string, why = ""): InferenceError {
  return new InferenceError("INTERNAL", `Unable to open shared memory region: '${clipped(key)}'${why}`);
}

/**
 * Read-write, never through a symbolic link (O_NOFOLLOW, as glibc's shm_open opens its objects) and never blocking
 * on a FIFO or device a key may name (O_NONBLOCK): a region must be a regular file, checked on the open descriptor.
 */
const REGION_OPEN_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function readFully(file: FileHandle, target: Uint8Array, position: number): Promise<number> {
  let done = 0;
  while (done < target.byteLength) {
    const { bytesRead } = await file.read(target, done, target.byteLength - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/**
 * Triton's system shared memory regions, shared by the HTTP and gRPC frontends. Node has no mmap: a region is
 * its /dev/shm file, opened once at registration and read or written at the region's offset. A region
 * unregistered while requests use it leaves the map at once (a new one may take its name) and closes its file
 * when the last of those requests releases it, as Triton defers its unmap.
 */
export class SystemSharedMemory {
  readonly #regions = new Map<string, Region>();
  /** Names being registered (their file is being opened): taken, so two registrations cannot race. */
  readonly #pending = new Set<string>();
  readonly #allowed: boolean;
  readonly #maxRegions: number;
  readonly #maxInputBytes: number;
  readonly #directory: string;

  constructor(options: SystemSharedMemoryOptions) {
    this.#allowed = options.allowed;
    this.#maxRegions = options.maxRegions;
    this.#maxInputBytes = options.maxInputBytes;
    this.#directory = options.directory ?? SHM_DIRECTORY;
  }

  /**
   * Refuses a client's register or unregister (of either kind of shared memory) unless --allow-client-shm is on,
   * with Triton's 501 text (server src/shared_memory_manager.cc and the frontends, since 26.05).
   */
  refuseIfDisabled(): void {
    if (!this.#allowed) {
      throw new InferenceError("UNSUPPORTED", "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.");
    }
  }

  async register(name: string, key: string, offset: number, byteSize: number): Promise<void> {
    this.refuseIfDisabled();
    if (name === "") throw invalidArg("a shared memory region needs a non-empty name");
    if (this.#regions.has(name) || this.#pending.has(name)) {
      throw new InferenceError("ALREADY_EXISTS", `shared memory region '${clipped(name)}' already in manager`);
    }
    if (this.#regions.size + this.#pending.size >= this.#maxRegions) {
      throw invalidArg(`failed to register shared memory region '${clipped(name)}': ${this.#maxRegions} regions are registered, the most allowed (--max-shared-memory-regions)`);
    }
    const path = pathOf(this.#directory, key);
    if (path === undefined) throw unableToOpen(key, `: a key names one file of ${this.#directory}`);
    this.#pending.add(name);
    let file: FileHandle | undefined;
    try {
      try {
        file = await open(path, REGION_OPEN_FLAGS);
      } catch (error) {
        const why = (error as NodeJS.ErrnoException).code === "ELOOP" ? ": it is a symbolic link" : "";
        throw unableToOpen(key, why);
      }
      const stats = await file.stat();
      if (!stats.isFile()) throw invalidArg(`Unable to open shared memory region: '${clipped(key)}': not a regular file`);
      if (byteSize === 0 || offset + byteSize > stats.size) throw invalidArg(`failed to register shared memory region '${clipped(name)}': invalid args`);
      this.#regions.set(name, { name, key, offset, byte_size: byteSize, file, users: 0, unregistered: false });
      file = undefined;
    } finally {
      this.#pending.delete(name);
      await file?.close();
    }
  }

  /** Every region, or the one named (NOT_FOUND when it is not registered). */
  status(name?: string): SharedMemoryRegionStatus[] {
    const status = (region: Region): SharedMemoryRegionStatus => ({ name: region.name, key: region.key, offset: region.offset, byte_size: region.byte_size });
    if (name === undefined || name === "") return [...this.#regions.values()].map(status);
    const region = this.#regions.get(name);
    if (region === undefined) throw new InferenceError("NOT_FOUND", `Unable to find system shared memory region: '${clipped(name)}'`);
    return [status(region)];
  }

  /** The region named, or every region (also at shutdown); a name not registered is no error, as in Triton. Files in use close when their requests end. */
  async unregister(name?: string): Promise<void> {
    const names = name === undefined || name === "" ? [...this.#regions.keys()] : [name];
    await Promise.all(names.map((one) => this.#drop(one)));
  }

  /**
   * Checks a tensor's place as Triton does and holds its region until {@link SharedMemoryLease.release}. Throws
   * NOT_FOUND for a region not registered, INVALID_ARG for a place outside it.
   */
  lease(reference: SharedMemoryReference): SharedMemoryLease {
    const { region: name, offset, byteSize } = reference;
    const region = this.#regions.get(name);
    if (region === undefined) throw new InferenceError("NOT_FOUND", `Unable to find shared memory region: '${clipped(name)}'`);
    if (offset >= region.byte_size) throw invalidArg(`Invalid offset for shared memory region: '${clipped(name)}'`);
    if (offset + byteSize > region.byte_size) throw invalidArg(`Invalid offset + byte size for shared memory region: '${clipped(name)}'`);
    region.users += 1;
    const position = region.offset + offset;
    let released = false;
    return {
      read: async () => {
        const bytes = new Uint8Array(byteSize);
        const got = await readFully(region.file, bytes, position);
        // The file was cut shorter than it was when registered.
        if (got < byteSize) throw invalidArg(`shared memory region '${clipped(name)}' holds ${got} of the ${byteSize} bytes asked for at offset ${offset}`);
        return bytes;
      },
      write: async (data) => {
        let done = 0;
        while (done < data.byteLength) done += (await region.file.write(data, done, data.byteLength - done, position + done)).bytesWritten;
      },
      release: () => {
        if (released) return;
        released = true;
        region.users -= 1;
        if (region.unregistered && region.users === 0) void region.file.close();
      },
    };
  }

  /** Refuses a request whose shared-memory inputs add up to more than --max-shared-memory-input-bytes. */
  admitInputBytes(byteSize: number): void {
    if (byteSize > this.#maxInputBytes) {
      throw invalidArg(`the request's inputs in shared memory hold ${byteSize} bytes, more than the ${this.#maxInputBytes} allowed (--max-shared-memory-input-bytes)`);
    }
  }

  async #drop(name: string): Promise<void> {
    const region = this.#regions.get(name);
    if (region === undefined) return;
    this.#regions.delete(name);
    region.unregistered = true;
    if (region.users === 0) await region.file.close();
  }
}
