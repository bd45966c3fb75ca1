// Original file: protocol/proto/grpc_service.proto


export interface CudaSharedMemoryRegisterResponse {
}

export interface CudaSharedMemoryRegisterResponse__Output {
}
