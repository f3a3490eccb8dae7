// When a rule's unit falls due (src/traces/rules/intake.ts): a span rule's delay runs from the span's
// end (so the exporter's own delay is not added to the evaluation lag), never from a future instant
// sent by a clock that runs ahead; a trace or session rule's quiet period runs from arrival.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dueBase, unitOf } from '../src/traces/rules/intake.ts';
import type { RuleRecord } from '../src/traces/rules/types.ts';
import type { Span } from '../src/traces/types.ts';

const now = new Date('2026-11-26T10:00:10.000Z');
const span = (end: string): Span => ({
  trace_id: 'a'.repeat(32),
  span_id: 'b'.repeat(16),
  parent_span_id: null,
  name: 'chat',
  kind: 'client',
  service_name: 'svc',
  start_time: end,
  end_time: end,
  start_time_unix_nano: '1',
  end_time_unix_nano: '1',
  status: { code: 'unset', message: null },
  attributes: { 'session.id': 's1' },
  resource_attributes: {},
  events: [],
  scope: { name: null, version: null },
  received_at: now.toISOString(),
});
const rule = (scope: RuleRecord['scope']) => ({ id: 'r1', org_id: 'o1', scope, delay_seconds: 5 }) as RuleRecord;

describe('when a unit falls due', () => {
  it('span scope: delay_seconds after the span ended, the end capped at now', () => {
    assert.equal(dueBase(rule('span'), span('2026-11-26T10:00:07.000Z'), now), Date.parse('2026-11-26T10:00:07.000Z'));
    assert.equal(unitOf(rule('span'), span('2026-11-26T10:00:07.000Z'), now)?.run_after, '2026-11-26T10:00:12.000Z');
    // A span "ending" in the future (the application's clock runs ahead): from now, never later.
    assert.equal(unitOf(rule('span'), span('2026-11-26T10:05:00.000Z'), now)?.run_after, '2026-11-26T10:00:15.000Z');
  });

  it('trace and session scope: the quiet period runs from arrival', () => {
    assert.equal(unitOf(rule('trace'), span('2026-11-26T10:00:07.000Z'), now)?.run_after, '2026-11-26T10:00:15.000Z');
    assert.equal(unitOf(rule('session'), span('2026-11-26T10:00:07.000Z'), now)?.run_after, '2026-11-26T10:00:15.000Z');
  });
});
