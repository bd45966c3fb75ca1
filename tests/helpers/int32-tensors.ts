/** INT32 tensor data as the backends get it (little-endian bytes), for tests that read values back out of a batch. */
export const int32 = (values: readonly number[]): Uint8Array => new Uint8Array(new Int32Array(values).buffer);

/** Copies first: a tensor's bytes may sit at an offset no Int32Array can start at. */
export const int32Values = (data: Uint8Array): number[] => [...new Int32Array(data.slice().buffer)];
