import { OperatorRuntimeError } from '../core/errors.js';

/**
 * A TypeBox schema that has no structural CRD equivalent (a `$ref`, a tuple, a union of object
 * types…). The message names the path in the schema and says what to write instead.
 */
export class UnsupportedSchemaError extends OperatorRuntimeError {
  declare readonly code: 'ERR_UNSUPPORTED_SCHEMA';
  /** Where in the schema, e.g. `versions[v1].schema.spec.properties.engine`. */
  readonly path: string;

  constructor(path: string, why: string) {
    super('ERR_UNSUPPORTED_SCHEMA', `schema at ${path} cannot become a structural CRD schema: ${why}`);
    this.path = path;
  }
}

/** A generated schema that breaks a structural-schema rule: a bug in the generator, never silently shipped. */
export class NonStructuralSchemaError extends OperatorRuntimeError {
  declare readonly code: 'ERR_NON_STRUCTURAL_SCHEMA';
  readonly violations: readonly string[];

  constructor(crdName: string, violations: readonly string[]) {
    super(
      'ERR_NON_STRUCTURAL_SCHEMA',
      `the schema generated for ${crdName} is not structural:\n${violations.join('\n')}`,
    );
    this.violations = violations;
  }
}
