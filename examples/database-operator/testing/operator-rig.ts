/**
 * The Database operator as tests build it: the operator's own `addDatabaseOperator` on a manager
 * made from its own `databaseManagerOptions`, plus what only tests set — the manager's clock (a
 * FakeClock, the simulation's) and an observer told about every finished reconcile (overlap
 * checks, the replica records of recorded-main.ts). The operator under src/ has no such options.
 */
import { Manager, type Clock } from 'operator-runtime';
import type { ReconcileObserver } from 'operator-runtime/controller';
import {
  addDatabaseOperator,
  databaseManagerOptions,
  type DatabaseOperator,
  type DatabaseOperatorOptions,
} from '../src/operator.js';

export interface OperatorRigOptions extends DatabaseOperatorOptions {
  /** The manager's clock. @defaultValue the real clock */
  readonly clock?: Clock;
  /** Told about every finished reconcile of every controller the operator registers. */
  readonly observer?: ReconcileObserver;
}

export function createOperatorUnderTest(options: OperatorRigOptions): DatabaseOperator {
  const { clock, observer, ...operatorOptions } = options;
  const manager = new Manager({ ...databaseManagerOptions(operatorOptions), ...(clock ? { clock } : {}) });
  return addDatabaseOperator(manager, operatorOptions, observer ? { observer } : {});
}
