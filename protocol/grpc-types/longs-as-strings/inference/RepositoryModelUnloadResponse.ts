// Original file: protocol/proto/grpc_service.proto


export interface RepositoryModelUnloadResponse {
}

export interface RepositoryModelUnloadResponse__Output {
}
