// Original file: protocol/proto/grpc_service.proto


export interface ServerLiveResponse {
  'live'?: (boolean);
}

export interface ServerLiveResponse__Output {
  'live': (boolean);
}
