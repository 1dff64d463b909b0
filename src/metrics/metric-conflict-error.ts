import { OperatorRuntimeError } from '../core/errors.js';

/**
 * Thrown when a component asks a registry for a metric under a name that is already taken by a
 * metric of another type or with other label names: sharing it would export a malformed series.
 */
export class MetricConflictError extends OperatorRuntimeError {
  declare readonly code: 'ERR_METRIC_CONFLICT';
  readonly metricName: string;

  constructor(metricName: string, message: string) {
    super('ERR_METRIC_CONFLICT', `metric ${metricName}: ${message}`);
    this.metricName = metricName;
  }
}
