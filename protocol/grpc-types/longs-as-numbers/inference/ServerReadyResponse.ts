// Original file: protocol/proto/grpc_service.proto


export interface ServerReadyResponse {
  'ready'?: (boolean);
}

export interface ServerReadyResponse__Output {
  'ready': (boolean);
}
