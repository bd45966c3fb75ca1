// Original file: protocol/proto/grpc_service.proto

import type { StatisticDuration as _inference_StatisticDuration, StatisticDuration__Output as _inference_StatisticDuration__Output } from '../inference/StatisticDuration';

export interface InferResponseStatistics {
  'compute_infer'?: (_inference_StatisticDuration | null);
  'compute_output'?: (_inference_StatisticDuration | null);
  'success'?: (_inference_StatisticDuration | null);
  'fail'?: (_inference_StatisticDuration | null);
  'empty_response'?: (_inference_StatisticDuration | null);
  'cancel'?: (_inference_StatisticDuration | null);
}

export interface InferResponseStatistics__Output {
  'compute_infer': (_inference_StatisticDuration__Output | null);
  'compute_output': (_inference_StatisticDuration__Output | null);
  'success': (_inference_StatisticDuration__Output | null);
  'fail': (_inference_StatisticDuration__Output | null);
  'empty_response': (_inference_StatisticDuration__Output | null);
  'cancel': (_inference_StatisticDuration__Output | null);
}
