/**
 * The API server's generic ObjectMeta validation: name, label keys and values, annotation keys,
 * finalizer names (core kinds also insist on domain-qualified ones unless standard) and owner
 * references (all four identifying fields, at most one controller). Messages match v1.20's.
 */
import type { Cause } from './api-errors.js';
import { isObject, type JsonObject } from './json-value.js';
import type { KindInfo } from './kind-registry.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function invalidValue(field: string, value: string, why: string): Cause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${why}` };
}

/** `metadata.name` rules: a DNS-1123 label for namespaces, a DNS-1123 subdomain otherwise. */
export function nameCauses(kind: KindInfo, name: string): Cause[] {
  if (kind.kind === 'Namespace') {
    if (name.length > 63) return [invalidValue('metadata.name', name, 'must be no more than 63 characters')];
    return DNS_LABEL.test(name) ? [] : [invalidValue('metadata.name', name, LABEL_MSG)];
  }
  if (name.length > 253) return [invalidValue('metadata.name', name, 'must be no more than 253 characters')];
  return DNS_SUBDOMAIN.test(name) ? [] : [invalidValue('metadata.name', name, SUBDOMAIN_MSG)];
}

/** Qualified names (`prefix/name` or `name`), as label keys, annotation keys and finalizers are. */
function qualifiedNameCauses(field: string, value: string): Cause[] {
  const parts = value.split('/');
  if (parts.length > 2)
    return [
      invalidValue(
        field,
        value,
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ),
    ];
  const causes: Cause[] = [];
  const name = parts[parts.length - 1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (!prefix) causes.push(invalidValue(field, value, 'prefix part must be non-empty'));
    else if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))
      causes.push(invalidValue(field, value, `prefix part ${SUBDOMAIN_MSG}`));
  }
  if (!name) causes.push(invalidValue(field, value, 'name part must be non-empty'));
  else if (name.length > 63) causes.push(invalidValue(field, value, 'name part must be no more than 63 characters'));
  else if (!NAME_PART.test(name)) causes.push(invalidValue(field, value, NAME_PART_MSG));
  return causes;
}

/** Every violation in `meta` (labels, annotations, finalizers, ownerReferences). */
export function metadataCauses(kind: KindInfo, meta: JsonObject): Cause[] {
  const causes: Cause[] = [];
  if (isObject(meta.labels)) {
    for (const [k, v] of Object.entries(meta.labels)) {
      causes.push(...qualifiedNameCauses('metadata.labels', k));
      const value = String(v);
      if (value.length > 63) causes.push(invalidValue('metadata.labels', value, 'must be no more than 63 characters'));
      else if (!LABEL_VALUE.test(value)) causes.push(invalidValue('metadata.labels', value, LABEL_VALUE_MSG));
    }
  }
  if (isObject(meta.annotations)) {
    for (const k of Object.keys(meta.annotations))
      causes.push(...qualifiedNameCauses('metadata.annotations', k.toLowerCase()));
  }
  if (Array.isArray(meta.finalizers)) {
    meta.finalizers.forEach((f, i) => {
      const name = String(f);
      const generic = qualifiedNameCauses('metadata.finalizers', name);
      causes.push(...generic);
      if (generic.length === 0 && kind.builtIn && !name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
        causes.push(
          invalidValue(
            `metadata.finalizers[${i}]`,
            name,
            'name is neither a standard finalizer name nor is it fully qualified',
          ),
        );
      }
    });
  }
  if (Array.isArray(meta.ownerReferences)) {
    const controllers: string[] = [];
    for (const ref of meta.ownerReferences) {
      if (!isObject(ref)) continue;
      for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) {
        if (!ref[f]) {
          const why =
            f === 'uid'
              ? 'uid must not be empty'
              : f === 'name'
                ? 'name must not be empty'
                : f === 'kind'
                  ? 'kind must not be empty'
                  : 'version must not be empty';
          causes.push(invalidValue(`metadata.ownerReferences.${f}`, String(ref[f] ?? ''), why));
        }
      }
      if (ref.controller === true) controllers.push(String(ref.name));
    }
    if (controllers.length > 1) {
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'metadata.ownerReferences',
        message: `Invalid value: ${JSON.stringify(meta.ownerReferences)}: Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`,
      });
    }
  }
  return causes;
}

/** Drops owner references repeating an earlier one's uid, as the server does before storing. */
export function dedupOwnerReferences(meta: JsonObject): void {
  if (!Array.isArray(meta.ownerReferences)) return;
  const seen = new Set<unknown>();
  meta.ownerReferences = meta.ownerReferences.filter((r) => {
    const uid = isObject(r) ? r.uid : r;
    if (seen.has(uid)) return false;
    seen.add(uid);
    return true;
  });
}
