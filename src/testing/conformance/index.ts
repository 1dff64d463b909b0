/** operator-runtime/testing/conformance: the client conformance suite (registers node:test tests). */
export { describeClientConformance, conformanceCrds, WIDGET_CRD_URL, NOTE_CRD } from './client-conformance.js';
export type { ConformanceTarget, ConformanceOptions } from './client-conformance.js';
