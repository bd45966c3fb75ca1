// Original file: protocol/proto/grpc_service.proto


export interface ServerLiveRequest {
}

export interface ServerLiveRequest__Output {
}
