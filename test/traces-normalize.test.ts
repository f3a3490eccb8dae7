// The receiver reads a protobuf export straight from protobufjs's decoded message (normalizeMessage,
// issue 33), not from its toObject form: the spans, rejections and reasons must be exactly those the
// toObject reading gives, and those of the same request sent as OTLP/JSON (its twin: lowerCamelCase
// names, hex ids, base64 bytes), for every kind of value, explicit defaults and every rejection.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { normalizeMessage, normalizeRequest } from '../src/traces/normalize.ts';
import { decodeExportMessage, decodeExportRequest, encodeExportRequest } from '../src/traces/proto.ts';

const T0 = 1_780_000_000_000_000_000n;
const ns = (offsetMs: number) => String(T0 + BigInt(offsetMs) * 1_000_000n);
const id = (bytes: number, fill: number) => Buffer.alloc(bytes, fill);
const str = (s: string) => ({ string_value: s });

const values = [
  { key: 's', value: str('text "quoted"\n') },
  { key: 'empty', value: str('') },
  { key: 'yes', value: { bool_value: true } },
  { key: 'no', value: { bool_value: false } },
  { key: 'neg', value: { int_value: '-5' } },
  { key: 'zero', value: { int_value: '0' } },
  { key: 'unsafe', value: { int_value: '9007199254740993' } },
  { key: 'max', value: { int_value: '9223372036854775807' } },
  { key: 'min', value: { int_value: '-9223372036854775808' } },
  { key: 'half', value: { double_value: 1.5 } },
  { key: 'list', value: { array_value: { values: [str('a'), { int_value: '2' }, { array_value: {} }, {}] } } },
  {
    key: 'map',
    value: {
      kvlist_value: {
        values: [
          { key: 'inner', value: { bool_value: true } },
          { key: 'deep', value: { kvlist_value: {} } },
        ],
      },
    },
  },
  { key: 'raw', value: { bytes_value: Buffer.from([0, 1, 2, 250]) } },
  { key: 'unset', value: {} },
  { key: 'none' },
  { value: str('no key') },
  { key: '', value: str('empty key') },
  { key: '__proto__', value: str('own, not the prototype') },
  { key: 's', value: str('the later wins') },
];

const good = (traceFill: number, extra: Record<string, unknown> = {}) => ({
  trace_id: id(16, traceFill),
  span_id: id(8, 1),
  name: 'op',
  start_time_unix_nano: ns(0),
  end_time_unix_nano: ns(5),
  ...extra,
});

/** One request (protobufjs's plain form) with every case the readers must agree on. */
const request = {
  resource_spans: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: str('svc') },
          { key: 'host', value: str('h1') },
        ],
      },
      scope_spans: [
        {
          scope: { name: 'lib', version: '1.2' },
          spans: [
            good(1, {
              parent_span_id: id(8, 9),
              kind: 3,
              attributes: values,
              status: { code: 2, message: 'boom' },
              events: [
                { name: 'retry', time_unix_nano: ns(2), attributes: [{ key: 'attempt', value: { int_value: '2' } }] },
                { attributes: [] },
                { name: '', time_unix_nano: '0' },
              ],
            }),
            good(2, { kind: 99, status: { code: 1 } }),
            good(3, { end_time_unix_nano: undefined, status: { message: '' } }),
            good(4, { end_time_unix_nano: '0', kind: 0 }),
            good(5, { span_id: id(8, 0xff), trace_state: 'x=y', flags: 1, dropped_attributes_count: 3 }),
          ],
        },
        // Explicit defaults (protobufjs writes a field set to its default): '' names, a zero end.
        { scope: { name: '', version: '' }, spans: [good(6, { name: 'explicit', parent_span_id: Buffer.alloc(0) })] },
        { spans: [good(7)] },
      ],
    },
    {
      scope_spans: [
        {
          spans: [
            good(0), // all-zero trace id
            good(8, { trace_id: id(8, 8) }), // too short
            good(9, { span_id: id(4, 1) }),
            good(10, { span_id: Buffer.alloc(0) }),
            good(11, { parent_span_id: id(3, 1) }),
            good(12, { name: '' }),
            good(13, { name: undefined }),
            good(14, { start_time_unix_nano: undefined }),
            good(15, { start_time_unix_nano: '0' }),
            good(16, { name: 'kept beside the rejected' }),
          ],
        },
      ],
    },
    { resource: {}, scope_spans: [] },
    {},
  ],
};

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** The request as OTLP/JSON says it: lowerCamelCase names, ids in hex, bytes in base64. */
function jsonTwin(v: unknown, key = ''): unknown {
  if (Buffer.isBuffer(v)) return key === 'bytes_value' ? v.toString('base64') : v.toString('hex');
  if (Array.isArray(v)) return v.map((x) => jsonTwin(x));
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => [camel(k), jsonTwin(x, k)]),
  );
}

it('a protobuf export read from its decoded message gives the spans its toObject form and its OTLP/JSON twin give', () => {
  const at = '2026-06-01T00:00:00.000Z';
  const body = encodeExportRequest(request);
  const viaMessage = normalizeMessage(decodeExportMessage(body), at);
  const viaObject = normalizeRequest(decodeExportRequest(body), at);
  const viaJson = normalizeRequest(JSON.parse(JSON.stringify(jsonTwin(request))), at);

  assert.deepStrictEqual(viaMessage, viaObject);
  assert.deepStrictEqual(viaMessage, viaJson);
  // The stored lines are the same text, key order included.
  assert.equal(JSON.stringify(viaMessage.spans), JSON.stringify(viaObject.spans));
  assert.equal(JSON.stringify(viaMessage.spans), JSON.stringify(viaJson.spans));

  // And they are what they should be, not merely alike.
  assert.equal(viaMessage.spans.length, 8);
  assert.equal(viaMessage.rejected, 9);
  const [first, second, third, fourth] = viaMessage.spans;
  assert.deepEqual(first!.attributes, {
    s: 'the later wins',
    empty: '',
    yes: true,
    no: false,
    neg: -5,
    zero: 0,
    unsafe: '9007199254740993',
    max: '9223372036854775807',
    min: '-9223372036854775808',
    half: 1.5,
    list: ['a', 2, [], null],
    map: { inner: true, deep: {} },
    raw: 'AAEC+g==',
    unset: null,
    none: null,
    '': 'empty key',
    ['__proto__']: 'own, not the prototype',
  });
  assert.equal(Object.getPrototypeOf(first!.attributes), Object.prototype);
  assert.ok(Object.hasOwn(first!.attributes, '__proto__'));
  assert.deepEqual(
    [first!.parent_span_id, first!.kind, first!.service_name, first!.status, first!.scope],
    ['0909090909090909', 'client', 'svc', { code: 'error', message: 'boom' }, { name: 'lib', version: '1.2' }],
  );
  assert.deepEqual(
    first!.events.map((e) => [e.name, e.time, e.attributes]),
    [
      ['retry', '2026-05-28T20:26:40.002Z', { attempt: 2 }],
      ['', '2026-05-28T20:26:40.000Z', {}],
      ['', '2026-05-28T20:26:40.000Z', {}],
    ],
  );
  assert.deepEqual([second!.kind, second!.status], ['unspecified', { code: 'ok', message: null }]);
  assert.equal(third!.end_time_unix_nano, third!.start_time_unix_nano, 'no end: the start');
  assert.equal(fourth!.end_time_unix_nano, '0', 'an explicit zero end is kept as sent');
  assert.deepEqual(viaMessage.spans[5]!.scope, { name: '', version: '' });
  assert.deepEqual(viaMessage.spans[6]!.scope, { name: null, version: null });
  assert.equal(viaMessage.spans[7]!.service_name, null);
  assert.deepEqual(
    [...viaMessage.reasons.values()].reduce((a, b) => a + b, 0),
    9,
  );
});
