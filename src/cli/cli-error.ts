/**
 * Bad input to the CLI (unknown command, missing or invalid config, a name that is not allowed, a
 * target it must not overwrite, a folder it cannot write): one line for the user, exit code 2.
 */
import { OperatorRuntimeError } from '../core/errors.js';

export const USAGE_EXIT_CODE = 2;

export class CliUsageError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CLI_USAGE';

  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_CLI_USAGE', message, options);
  }
}

/**
 * A check the user asked for found problems (`validate bundle`, `--kubernetes-version`): each of
 * `problems` is printed as one `error:` line, then the message; exit code 1.
 */
export class CliCheckFailedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CLI_CHECK_FAILED';
  readonly problems: readonly string[];

  constructor(message: string, problems: readonly string[]) {
    super('ERR_CLI_CHECK_FAILED', message);
    this.problems = [...problems];
  }
}
