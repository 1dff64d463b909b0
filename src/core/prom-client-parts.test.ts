import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as promClient from 'prom-client';
import { Counter, Gauge, Histogram, Registry } from './prom-client-parts.js';

test('the classes loaded from prom-client files are the ones its index exports (a new layout fails here)', () => {
  assert.equal(Registry, promClient.Registry);
  assert.equal(Counter, promClient.Counter);
  assert.equal(Gauge, promClient.Gauge);
  assert.equal(Histogram, promClient.Histogram);
});
