import { requeueUnit } from './requeue-unit.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

ruleTester.run('requeue-unit', asEslintRule(requeueUnit), {
  valid: [
    `return requeueAfter(30_000);`,
    `return requeueAfter(10 * 60_000);`,
    `return requeueAfter(0);`, // at once: a unit does not matter
    `return requeueAfter(pollMs);`,
    `return { kind: 'requeueAfter', requeueAfterMs: 1000 };`,
    `setTimeout(done, 30);`, // not a requeue
  ],
  invalid: [
    {
      code: `return requeueAfter(30);`,
      errors: [
        {
          messageId: 'looksLikeSeconds',
          data: { value: '30', suggested: '30_000' },
          suggestions: [
            {
              messageId: 'asMilliseconds',
              data: { value: '30', suggested: '30_000' },
              output: `return requeueAfter(30_000);`,
            },
          ],
        },
      ],
    },
    {
      code: `return { kind: 'requeueAfter', requeueAfterMs: 5 };`,
      errors: [
        {
          messageId: 'looksLikeSeconds',
          suggestions: [
            { messageId: 'asMilliseconds', output: `return { kind: 'requeueAfter', requeueAfterMs: 5_000 };` },
          ],
        },
      ],
    },
    {
      code: `return helpers.requeueAfter(0.5);`,
      errors: [
        {
          messageId: 'looksLikeSeconds',
          suggestions: [{ messageId: 'asMilliseconds', output: `return helpers.requeueAfter(500);` }],
        },
      ],
    },
  ],
});
