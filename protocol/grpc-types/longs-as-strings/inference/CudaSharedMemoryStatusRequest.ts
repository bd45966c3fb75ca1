// Original file: protocol/proto/grpc_service.proto


export interface CudaSharedMemoryStatusRequest {
  'name'?: (string);
}

export interface CudaSharedMemoryStatusRequest__Output {
  'name': (string);
}
