/** logging: a pino logger factory with credential redaction, and a recording logger for tests. */
export { createLogger, DEFAULT_LOG_LEVEL } from './create-logger.js';
export type { LoggerOptions } from './create-logger.js';
export { DEFAULT_REDACT_KEYS, REDACTED, REDACTED_TOO_DEEP, createRedactor } from './redact.js';
export { recordingLogger } from './recording-logger.js';
export type { RecordingLogger, RecordedEntry, RecordedLevel } from './recording-logger.js';
