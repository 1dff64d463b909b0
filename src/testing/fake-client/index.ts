/**
 * fake-client: an in-memory `Client` for unit tests, held to the API server's behaviour by the
 * conformance suite in `../conformance`. See README.md for what it models and what it does not.
 */
export { FakeClient, DEFAULT_WATCH_HISTORY_LIMIT } from './fake-client.js';
export type { FakeClientOptions } from './fake-client.js';
export type { KindInfo, KindRegistration } from './kind-registry.js';
export type { SchemaProps } from './schema-validation.js';
export {
  everyNth,
  conflictFor,
  internalErrorFor,
  tooManyRequestsFor,
  isWrite,
  isStatusWrite,
  matchesFilter,
} from './requests.js';
export type { FakeRequest, FakeVerb, Interceptor, RequestFilter } from './requests.js';
