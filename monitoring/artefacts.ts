/** The generated files and what renders each, shared by `generate.ts` and the drift test. */
import { renderDashboard, renderPrometheusRule, renderRuleFile } from './render.js';

export interface Artefact {
  /** Relative to this folder. */
  readonly file: string;
  readonly render: () => string;
}

export const ARTEFACTS: readonly Artefact[] = [
  { file: 'operator-runtime.rules.yaml', render: () => renderRuleFile() },
  { file: 'prometheus-rule.yaml', render: () => renderPrometheusRule() },
  { file: 'grafana-dashboard.json', render: () => renderDashboard() },
];
