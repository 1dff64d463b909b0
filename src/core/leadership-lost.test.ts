import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeadershipLostError } from '../leader-election/leadership-lost-error.js';
import { isLeadershipLost } from './leadership-lost.js';

test('isLeadershipLost recognises the elector error and any reason carrying its code, nothing else', () => {
  assert.equal(isLeadershipLost(new LeadershipLostError('ns/lease', 'lease-lost')), true);
  assert.equal(isLeadershipLost(Object.assign(new Error('lease lost'), { code: 'ERR_LEADERSHIP_LOST' })), true);
  for (const other of [undefined, null, 'ERR_LEADERSHIP_LOST', new Error('x'), { code: 'ERR_ABORTED' }, 42])
    assert.equal(isLeadershipLost(other), false, String(other));
});
