import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import type { Logger as PinoLogger, pino } from 'pino';
import { omitUndefined } from '../core/omit-undefined.js';
import { DEFAULT_REDACT_KEYS, createRedactor } from './redact.js';

// `require`, not `import`, as the runtime's other CommonJS dependencies: in a bare Node 20 the first
// large CJS file that ESM imports costs ~4.6 MiB once, which `require` does not (docs/footprint.md).
const createPino: typeof pino = createRequire(import.meta.url)('pino').pino;

/** @defaultValue 'info' */
export const DEFAULT_LOG_LEVEL: pino.LevelWithSilent = 'info';

export interface LoggerOptions {
  /** Lowest level written. @defaultValue {@link DEFAULT_LOG_LEVEL} */
  readonly level?: pino.LevelWithSilent;
  /** Where lines go (one JSON object per line). Tests pass a stream to capture them. @defaultValue stdout */
  readonly destination?: pino.DestinationStream;
  /**
   * The logger's own name (e.g. the operator's), written as `logger` on every line. Not pino's
   * `name`: a reconcile line already has the object's `name`, and a line with two `name` keys
   * keeps only one in most log pipelines (controller-runtime's shape, issue 23).
   */
  readonly name?: string;
  /** Fields on every line, instead of pino's `pid` and `hostname`. */
  readonly base?: Readonly<Record<string, unknown>>;
  /** Property names to redact in addition to {@link DEFAULT_REDACT_KEYS} (matched at any depth, any case). */
  readonly redactKeys?: readonly string[];
}

/**
 * A pino logger that fits the runtime's `Logger` interface: JSON lines with string levels and ISO
 * times. Credentials never reach a line: any property named in the redaction list is replaced at
 * any depth (pino's own path-based `redact` would need a wildcard path per depth, costs ~15 µs a
 * line with them, and still misses deeper nesting such as a kubeconfig's `users[].user.token`),
 * and so are `data`/`stringData` of anything with `kind: 'Secret'`.
 */
export function createLogger(options: LoggerOptions = {}): PinoLogger {
  const redact = createRedactor([...DEFAULT_REDACT_KEYS, ...(options.redactKeys ?? [])]);
  const logger = createPino(
    {
      level: options.level ?? DEFAULT_LOG_LEVEL,
      // pino's own default base is { pid, hostname }; kept unless the caller gives another.
      base: {
        ...(options.base ?? { pid: process.pid, hostname: hostname() }),
        ...omitUndefined({ logger: options.name }),
      },
      timestamp: createPino.stdTimeFunctions.isoTime,
      hooks: {
        // The message and printf arguments are free text the formatters never see (issue 18).
        logMethod(args, method) {
          const first = typeof args[0] === 'object' && args[0] !== null ? 1 : 0;
          const redacted = args.map((arg: unknown, i) => (i < first ? arg : redact(arg))) as typeof args;
          return method.apply(this, redacted);
        },
      },
      formatters: {
        level: (label) => ({ level: label }),
        bindings: (bindings) => redact(bindings),
        log: (obj) => redact(obj),
      },
    },
    options.destination,
  );
  // pino applies `formatters.bindings` to the root's bindings only, not to `child()` bindings.
  // Children are created with Object.create(parent), so this override reaches every descendant.
  const pinoChild = logger.child;
  logger.child = function (this: PinoLogger, bindings, childOptions) {
    return pinoChild.call(this, redact(bindings), childOptions);
  } as typeof logger.child;
  return logger;
}
