// The shipped check and code presets (data/check-presets.json): each one decides the examples it is
// for, through the real server (seeded at start-up, public, read-only, run by name).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadCheckPresets } from '../src/checks/presets.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let key: string;
before(async () => {
  srv = await startTestServer({ TRIBUNAL_RATE_LIMIT: '100000' });
  key = (await srv.demoUser()).api_key;
});
after(() => srv.close());

const run = async (id: string, body: Record<string, unknown>) => {
  const res = await srv.request('POST', `/v1/evaluators/${id}/execute/`, { key, body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.evaluator_results[0];
};

describe('check and code presets', () => {
  test('all four are listed as public read-only presets with their kind', async () => {
    const ids = loadCheckPresets().map((p) => p.id);
    assert.deepEqual(ids.sort(), ['preset_answer_length', 'preset_no_pii_patterns', 'preset_tool_was_called', 'preset_valid_json']);
    for (const id of ids) {
      const res = await srv.request('GET', `/v1/evaluators/${id}/`, { key });
      assert.equal(res.status, 200);
      assert.equal(res.body.is_preset, true);
      assert.ok(['check', 'code'].includes(res.body.kind));
      const edit = await srv.request('PATCH', `/v1/evaluators/${id}/`, { key, body: { intent: 'mine now' } });
      assert.equal(edit.status, 403);
    }
  });

  test('seeding again (a restart, another instance) changes nothing: every preset stays at version 1', async () => {
    const { syncPresets } = await import('../src/domain/presets.ts');
    await syncPresets(srv.store);
    await syncPresets(srv.store);
    for (const p of loadCheckPresets()) assert.equal((await srv.store.getEvaluator(p.id))?.version, 1, p.id);
  });

  test('Valid JSON and Answer length', async () => {
    assert.equal((await run('preset_valid_json', { response: '{"ok": true}' })).score, 1);
    assert.equal((await run('preset_valid_json', { response: 'ok: true' })).score, 0);
    assert.equal((await run('preset_answer_length', { response: 'Paris is the capital.' })).score, 1);
    const long = await run('preset_answer_length', { response: 'word '.repeat(301) });
    assert.equal(long.score, 0);
    assert.match(long.justification, /301 words, more than 300/);
  });

  test('No PII patterns finds each kind and passes clean text', async () => {
    const cases: Array<[string, RegExp | null]> = [
      ['Write to jane.doe@example.com for details.', /email address/],
      ['Call me at +1 415-555-0132 tomorrow.', /phone number/],
      ['Her SSN is 123-45-6789.', /social security number/],
      ['Card: 4111 1111 1111 1111, exp 12/29.', /payment card number/],
      ['Pay to DE89 3704 0044 0532 0130 00 please.', /IBAN/],
      ['The meeting is in room 101 at 3 pm; the order number is 1234-5678.', null],
      ['Paris has 2,102,650 inhabitants (2023).', null],
    ];
    for (const [response, found] of cases) {
      const r = await run('preset_no_pii_patterns', { response });
      assert.equal(r.error, undefined, r.error);
      assert.equal(r.score, found ? 0 : 1, `${response}: ${r.justification}`);
      if (found) assert.match(r.justification, found);
    }
  });

  test('A tool was called reads the turns', async () => {
    const turns = [
      { role: 'user', content: 'Book a table.' },
      { role: 'assistant', content: '', tool_calls: [{ name: 'book_table', arguments: { people: 2 } }] },
      { role: 'tool', content: 'booked', tool_call_id: 'x' },
      { role: 'assistant', content: 'Booked for two.' },
    ];
    const called = await run('preset_tool_was_called', { turns });
    assert.equal(called.score, 1);
    assert.match(called.justification, /book_table/);
    assert.equal((await run('preset_tool_was_called', { turns: [turns[0], { role: 'assistant', content: 'Sure, done.' }] })).score, 0);
  });
});
