// Original file: protocol/proto/grpc_service.proto


export interface SystemSharedMemoryRegisterResponse {
}

export interface SystemSharedMemoryRegisterResponse__Output {
}
