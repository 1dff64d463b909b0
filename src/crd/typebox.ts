/**
 * The TypeBox values operator-runtime uses at run time, from one file: `npm run build` replaces
 * this file's compiled output with a single-file bundle of just these exports
 * (scripts/packaging/bundle-typebox.ts). TypeBox ships as ~370 ES modules, and loading them cost the
 * reference operator ~12 MiB of its idle RSS on Node 20 (docs/footprint.md); one file costs ~2.
 * Types still come from the `typebox` package (`import type`), which stays a dependency.
 */
export { IsSchema, Type } from 'typebox';
