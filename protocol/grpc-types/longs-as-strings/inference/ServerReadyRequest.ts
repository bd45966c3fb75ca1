// Original file: protocol/proto/grpc_service.proto


export interface ServerReadyRequest {
}

export interface ServerReadyRequest__Output {
}
