// The quick check of `tribunal eval`'s rows (src/cli/row-quick-check.ts) against the row schema
// (src/cli/row-check.ts): the quick check passes a plain row without loading zod, so it must pass
// only rows the schema passes, and give the same input (the same bytes on the wire). Held two
// ways: field by field (the schema's fields and limits are the quick check's, so a limit added to
// the server's schema fails here until the quick check follows), and row by row over generated rows.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { allRows, openDataset } from '../src/cli/dataset.ts';
import { RowInput, toRunInput } from '../src/cli/row-check.ts';
import { QUICK_RULES, QUICK_TEXT_FIELDS, quickRunInput } from '../src/cli/row-quick-check.ts';

type Def = {
  type: string;
  innerType?: { _zod: { def: Def } };
  element?: { _zod: { def: Def } };
  checks?: Array<{ _zod: { def: { check: string; minimum?: number; maximum?: number } } }>;
};
const defOf = (schema: unknown) => (schema as { _zod: { def: Def } })._zod.def;

describe('the quick row check follows the row schema', () => {
  test('the same fields in the same order, each with the same type and limits', () => {
    assert.deepEqual(Object.keys(RowInput.shape), ['turns', ...QUICK_TEXT_FIELDS], 'the quick check knows every field but turns, in the schema order');
    assert.equal(defOf(RowInput).type, 'object');
    assert.equal((defOf(RowInput) as { catchall?: unknown }).catchall, undefined, 'unknown fields are dropped, as the quick check drops them');
    for (const field of QUICK_TEXT_FIELDS) {
      const outer = defOf(RowInput.shape[field]);
      assert.equal(outer.type, 'optional', field);
      const inner = outer.innerType!._zod.def;
      const rule = QUICK_RULES[field];
      const limits = (inner.checks ?? []).map((c) => c._zod.def);
      if (rule.list) {
        assert.equal(inner.type, 'array', field);
        assert.deepEqual(limits, [], `${field}: a list without limits`);
        assert.equal(inner.element!._zod.def.type, 'string', field);
        assert.deepEqual(inner.element!._zod.def.checks ?? [], [], `${field}: items without limits`);
        continue;
      }
      assert.equal(inner.type, 'string', field);
      const want = [...(rule.min !== undefined ? [['min_length', rule.min]] : []), ...(rule.max !== undefined ? [['max_length', rule.max]] : [])];
      assert.deepEqual(
        limits.map((c) => [c.check, c.minimum ?? c.maximum]),
        want,
        `${field}: the schema's limits are the quick check's`,
      );
    }
  });

  test('row by row: whatever the quick check passes, the schema passes with the same input and id', () => {
    let seed = 33;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const texts = ['', 'a', 'Open Settings, then Security.', 'é😀 ünïcode', 'x'.repeat(199), 'x'.repeat(200), 'x'.repeat(201)];
    const others = [undefined, undefined, undefined, null, 0, 5, true, {}, [], ['a', 'b'], ['a', 5], [null]];
    const values = [...texts, ...texts, ...others];
    let passed = 0;
    const fields = [...QUICK_TEXT_FIELDS, 'turns', 'id', 'trace_id', 'unknown'];
    const rows: Array<Record<string, unknown>> = [
      { id: 'q1', request: 'How do I reset my password?', response: 'Open Settings.', tags: ['bench'] },
      { response: 'r', contexts: ['a', 'b'], expected_output: 'e', user_id: 'u'.repeat(200), session_id: 's', system_prompt: 'p' },
    ];
    for (let i = 0; i < 20_000; i++) {
      const row: Record<string, unknown> = {};
      for (const f of fields) if (random() < 0.5) row[f] = f === 'turns' ? pick([undefined, null, [], [{ role: 'user', content: 'hi' }]]) : pick(values);
      if (random() < 0.8) row.response = pick(texts);
      rows.push(row);
    }
    for (const row of rows) {
      const quick = quickRunInput(row);
      if (!quick) continue;
      passed++;
      const full = toRunInput(row);
      assert.ok(full.input, `the schema refuses what the quick check passed: ${JSON.stringify(row)} (${full.error})`);
      assert.equal(JSON.stringify(quick), JSON.stringify(full), `not the same input for ${JSON.stringify(row)}`);
    }
    assert.ok(quickRunInput(rows[0]!) && quickRunInput(rows[1]!), 'plain rows pass the quick check');
    assert.ok(passed > 1000, `the quick check passed ${passed} rows: too few to say anything`);
  });
});

describe('a dataset of mixed rows', () => {
  test('plain rows (quick check), bad rows and conversations (row schema) each come out as the row schema says, with the hash a resume compares', async () => {
    const lines = [
      JSON.stringify({ id: 'a', request: 'Q?', response: 'A.', tags: ['t'] }),
      JSON.stringify({ id: 'b', response: '' }),
      '{not json',
      JSON.stringify({
        turns: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      }),
      JSON.stringify({ response: 'R', user_id: 'u'.repeat(201) }),
    ];
    const rows = await allRows(await openDataset(`${lines.join('\n')}\n`, 'jsonl'));
    assert.equal(rows.length, 5);
    for (const [i, row] of rows.entries()) {
      // The same 16 hex digits as every earlier version wrote to --out (a resume reads them back).
      assert.equal(row.hash, createHash('sha1').update(lines[i]!).digest('hex').slice(0, 16), `row ${i + 1}'s hash`);
      if (i === 2) continue;
      const want = toRunInput(JSON.parse(lines[i]!));
      assert.equal(JSON.stringify({ input: row.input, id: row.id, error: row.error }), JSON.stringify({ input: want.input, id: want.id, error: want.error }), `row ${i + 1}`);
    }
    assert.match(rows[2]!.error!, /^invalid JSON/);
    assert.deepEqual(
      rows.map((r) => Boolean(r.error)),
      [false, true, true, false, true],
    );
  });
});
