/** operator-runtime/testing/conformance: the client conformance suite (registers node:test tests). */
export { describeClientConformance, conformanceCrds, WIDGET_CRD, NOTE_CRD } from './client-conformance.js';
export type { ConformanceTarget, ConformanceOptions } from './client-conformance.js';
