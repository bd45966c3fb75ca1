// Original file: protocol/proto/grpc_service.proto

import type { Long } from '@grpc/proto-loader';

export interface InferParameter {
  'bool_param'?: (boolean);
  'int64_param'?: (number | string | Long);
  'string_param'?: (string);
  'double_param'?: (number | string);
  'uint64_param'?: (number | string | Long);
  'parameter_choice'?: "bool_param"|"int64_param"|"string_param"|"double_param"|"uint64_param";
}

export interface InferParameter__Output {
  'bool_param'?: (boolean);
  'int64_param'?: (number);
  'string_param'?: (string);
  'double_param'?: (number);
  'uint64_param'?: (number);
  'parameter_choice'?: "bool_param"|"int64_param"|"string_param"|"double_param"|"uint64_param";
}
