// Original file: protocol/proto/grpc_service.proto


export interface ServerMetadataRequest {
}

export interface ServerMetadataRequest__Output {
}
