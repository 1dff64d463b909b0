/**
 * The TypeBox values operator-runtime uses at run time, from one file: `npm run build` replaces
 * this file's compiled output with a single-file bundle of just these exports
 * (scripts/packaging/bundle-typebox.ts). TypeBox ships as ~370 ES modules, and loading them added ~12 MiB
 * of RSS to the reference operator's start-up on Node 20 (~9 on Node 24; docs/footprint.md).
 * Types still come from the `typebox` package (`import type`), which stays a dependency.
 */
export { IsSchema, Type } from 'typebox';
