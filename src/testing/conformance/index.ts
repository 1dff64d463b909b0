/** operator-runtime/testing/conformance: the client conformance suite (registers node:test tests). */
export { describeClientConformance, conformanceCrds, WIDGET_CRD_URL } from './client-conformance.js';
export type { ConformanceTarget } from './client-conformance.js';
