// Original file: protocol/proto/grpc_service.proto


export interface RepositoryModelLoadResponse {
}

export interface RepositoryModelLoadResponse__Output {
}
