import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReviewBudget, SMALL_REVIEW_BYTES } from './review-budget.js';

describe('review budget', () => {
  test('big reviews cannot take the last eighth of the slots or the bytes; small ones can', () => {
    const budget = new ReviewBudget(8, 8 * 1024 * 1024);
    const big = 3 * 1024 * 1024;
    assert.equal(budget.tryAdmit(big), true);
    assert.equal(budget.tryAdmit(big), true);
    assert.equal(budget.tryAdmit(big), false, '9 MiB would pass 7 MiB, the share of big reviews');
    assert.equal(budget.tryAdmit(SMALL_REVIEW_BYTES), true, 'a small review still fits');
    assert.equal(budget.inFlightBytes, 2 * big + SMALL_REVIEW_BYTES);
    budget.release(big);
    assert.equal(budget.tryAdmit(big), true, 'released bytes are reusable');
  });

  test('slots: big reviews stop at seven eighths, small ones at the limit', () => {
    const budget = new ReviewBudget(8, 1024 * 1024 * 1024);
    for (let i = 0; i < 7; i++) assert.equal(budget.tryAdmit(SMALL_REVIEW_BYTES + 1), true);
    assert.equal(budget.tryAdmit(SMALL_REVIEW_BYTES + 1), false);
    assert.equal(budget.tryAdmit(10), true);
    assert.equal(budget.tryAdmit(10), false);
    assert.equal(budget.inFlightReviews, 8);
  });

  test('growing a reservation past what fits takes nothing; couldEverFit tells 413 from 429', () => {
    const budget = new ReviewBudget(4, 8 * 1024 * 1024);
    assert.equal(budget.tryAdmit(1024 * 1024), true);
    assert.equal(budget.tryGrow(7 * 1024 * 1024, 8 * 1024 * 1024), false);
    assert.equal(budget.inFlightBytes, 1024 * 1024);
    assert.equal(budget.tryGrow(1024 * 1024, 2 * 1024 * 1024), true);
    assert.equal(budget.couldEverFit(7 * 1024 * 1024), true);
    assert.equal(budget.couldEverFit(7 * 1024 * 1024 + 1), false);
  });
});
