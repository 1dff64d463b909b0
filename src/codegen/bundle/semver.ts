/**
 * Semantic Versioning 2.0.0, as a CSV's `spec.version` and name suffix need it: the regular
 * expression semver.org gives (section "Is there a suggested regular expression"), no leading `v`.
 */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const isSemver = (text: unknown): text is string => typeof text === 'string' && SEMVER.test(text);
