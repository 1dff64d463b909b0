/**
 * Scenarios generated from a kind's schema, as Acto (SOSP '23) does: a seeded sequence of creates,
 * spec changes within the schema (enums, minimum/maximum, min/max length and items, required
 * fields), deletes and re-creates, and changes by another writer that land a few milliseconds after
 * the step before (racing the operator's own writes). The seed draws the sequence, so a seed names
 * one scenario on any machine; `simulate({ scenario: (seed) => generateScenario({ …, seed }) })`
 * gives every seed its own.
 *
 * Values stay inside the schema the fake client enforces (CEL rules and `pattern`s are not
 * modelled: a generated value the store refuses makes the step skipped, as kubectl would fail and
 * move on). Only `spec` is generated; status is the operator's.
 */
import { seededRandom } from '../../core/seeded-random.js';
import type { SchemaProps } from '../fake-client/schema-validation.js';
import type { ObjectTarget, Scenario, ScenarioStep } from './scenario.js';

export interface ScenarioGeneratorOptions {
  /** The kind and its schema (a fake-client kind registration, or the CRD version's openAPIV3Schema). */
  readonly kind: { readonly apiVersion: string; readonly kind: string; readonly schema?: SchemaProps };
  readonly seed: number;
  /** @defaultValue {@link DEFAULT_GENERATED_STEPS} */
  readonly steps?: number;
  /** Names drawn from (`<prefix>-1`…): few, so that steps meet the same objects. @defaultValue {@link DEFAULT_GENERATED_OBJECTS} */
  readonly objects?: number;
  /** @defaultValue {@link DEFAULT_GENERATED_NAMESPACE} */
  readonly namespace?: string;
  /** @defaultValue the kind in lower case */
  readonly namePrefix?: string;
  /** Fake time between steps (another writer's change comes sooner). @defaultValue the simulation's `stepGapMs` */
  readonly stepGapMs?: number;
}

/** @defaultValue 8 */
export const DEFAULT_GENERATED_STEPS = 8;
/** @defaultValue 3 */
export const DEFAULT_GENERATED_OBJECTS = 3;
/** @defaultValue 'default' */
export const DEFAULT_GENERATED_NAMESPACE = 'default';
/** How soon another writer's change follows the step before: inside the operator's reconcile of it. */
export const OTHER_WRITER_AFTER_MS = 5;

type Random = () => number;

/** A seeded scenario for `options.kind` (see the module comment). */
export function generateScenario(options: ScenarioGeneratorOptions): Scenario {
  const random = seededRandom(options.seed * 7919 + 17);
  const specSchema = options.kind.schema?.properties?.spec ?? { type: 'object' };
  const namespace = options.namespace ?? DEFAULT_GENERATED_NAMESPACE;
  const prefix = options.namePrefix ?? options.kind.kind.toLowerCase();
  const names = Array.from({ length: options.objects ?? DEFAULT_GENERATED_OBJECTS }, (_, i) => `${prefix}-${i + 1}`);
  const live = new Map<string, Record<string, unknown>>();
  const steps: ScenarioStep[] = [];
  const target = (name: string): ObjectTarget => ({
    apiVersion: options.kind.apiVersion,
    kind: options.kind.kind,
    namespace,
    name,
  });
  const timing = (ms?: number) =>
    ms !== undefined ? { afterMs: ms } : options.stepGapMs !== undefined ? { afterMs: options.stepGapMs } : {};
  const count = options.steps ?? DEFAULT_GENERATED_STEPS;
  for (let i = 0; i < count; i++) {
    const absent = names.filter((n) => !live.has(n));
    const present = [...live.keys()];
    const x = random();
    if (present.length === 0 || (absent.length > 0 && x < 0.3)) {
      const name = pick(random, absent);
      const spec = valueFor(specSchema, random, true) as Record<string, unknown>;
      live.set(name, spec);
      const object = {
        apiVersion: options.kind.apiVersion,
        kind: options.kind.kind,
        metadata: { name, namespace },
        spec,
      };
      steps.push({ type: 'create', object, ...timing() });
    } else if (x < 0.75) {
      const name = pick(random, present);
      const patch = specChange(specSchema, live.get(name)!, random);
      if (!patch) continue;
      live.set(name, { ...live.get(name)!, ...patch });
      steps.push({ type: 'patch', target: target(name), patch: { spec: patch }, ...timing() });
    } else if (x < 0.9) {
      // Another writer: a label (or a spec field) changed while the operator still works on the step before.
      const name = pick(random, present);
      const patch =
        random() < 0.5
          ? { metadata: { labels: { 'simulation.example.com/touched': String(i) } } }
          : { spec: specChange(specSchema, live.get(name)!, random) ?? {} };
      if ('spec' in patch) live.set(name, { ...live.get(name)!, ...patch.spec });
      steps.push({ type: 'patch', target: target(name), patch, afterMs: OTHER_WRITER_AFTER_MS });
    } else {
      const name = pick(random, present);
      live.delete(name);
      steps.push({ type: 'delete', target: target(name), ...timing() });
    }
  }
  return steps;
}

/** A merge patch changing one top-level spec field to another value the schema allows (or dropping an optional one). */
function specChange(
  schema: SchemaProps,
  current: Record<string, unknown>,
  random: Random,
): Record<string, unknown> | undefined {
  const fields = Object.keys(schema.properties ?? {});
  if (fields.length === 0) return undefined;
  const field = pick(random, fields);
  const required = new Set(schema.required ?? []);
  if (!required.has(field) && current[field] !== undefined && random() < 0.2) return { [field]: null };
  for (let attempt = 0; attempt < 4; attempt++) {
    const value = valueFor(schema.properties![field]!, random, true);
    if (JSON.stringify(value) !== JSON.stringify(current[field])) return { [field]: value };
  }
  return undefined;
}

/** A value `schema` accepts (`full`: optional object fields too, each with even odds). */
export function valueFor(schema: SchemaProps, random: Random, full = false): unknown {
  if (schema.enum && schema.enum.length > 0) return pick(random, schema.enum);
  if (schema['x-kubernetes-int-or-string']) return Math.floor(random() * 5) + 1;
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const low = (schema.minimum ?? 0) + (schema.exclusiveMinimum ? 1 : 0);
      const high = (schema.maximum ?? low + 10) - (schema.exclusiveMaximum ? 1 : 0);
      const n = low + random() * (high - low);
      return schema.type === 'integer' ? Math.min(high, Math.max(low, Math.round(n))) : n;
    }
    case 'boolean':
      return random() < 0.5;
    case 'string': {
      const length = Math.max(schema.minLength ?? 1, Math.min(schema.maxLength ?? 6, 1 + Math.floor(random() * 6)));
      return Array.from({ length }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 26)]).join('');
    }
    case 'array': {
      const low = schema.minItems ?? 0;
      const n = Math.min(schema.maxItems ?? low + 2, low + Math.floor(random() * 3));
      return Array.from({ length: n }, () => valueFor(schema.items ?? { type: 'string' }, random, full));
    }
    default: {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, prop] of Object.entries(schema.properties ?? {}))
        if (required.has(name) || (full && random() < 0.5)) out[name] = valueFor(prop, random, full);
      return out;
    }
  }
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}
