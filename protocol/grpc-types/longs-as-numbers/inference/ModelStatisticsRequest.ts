// Original file: protocol/proto/grpc_service.proto


export interface ModelStatisticsRequest {
  'name'?: (string);
  'version'?: (string);
}

export interface ModelStatisticsRequest__Output {
  'name': (string);
  'version': (string);
}
