// The proxy reads its query flags (async_judge, judge_id) without express's req.query, which runs
// querystring over the whole query on every read (src/proxy/chat.ts, queryValue): it must answer
// exactly what req.query would, for plain queries and for the ones it hands back to req.query.
import assert from 'node:assert/strict';
import querystring from 'node:querystring';
import { test } from 'node:test';
import type { Request } from 'express';
import { queryValue } from '../src/proxy/chat.ts';

/** A request as queryValue reads it: its URL, and req.query as express 5 ("simple" parser) makes it. */
const requestFor = (url: string) => {
  const q = url.indexOf('?');
  return { url, query: q < 0 ? {} : querystring.parse(url.slice(q + 1)) } as unknown as Request;
};

test('queryValue answers what req.query answers', () => {
  const queries = [
    '/p',
    '/p?',
    '/p?async_judge=true',
    '/p?async_judge=1&x=2',
    '/p?x=2&async_judge',
    '/p?async_judge=',
    '/p?async_judge=true&async_judge=false',
    '/p?async_judge=a=b',
    '/p?&&async_judge=1&&',
    '/p?async_judgex=true',
    '/p?xasync_judge=true',
    '/p?async_judge=%74rue',
    '/p?async%5Fjudge=true',
    '/p?async_judge=tr+ue',
    `/p?${'a=1&'.repeat(400)}async_judge=true`,
    `/p?${'a&'.repeat(1200)}async_judge=true`,
    '/p?judge_id=jdg_1&judge_id=jdg_2',
    '/p?judge_id=My%20judge',
  ];
  for (const url of queries)
    for (const name of ['async_judge', 'judge_id']) {
      const req = requestFor(url);
      assert.deepEqual(queryValue(req, name), (req.query as Record<string, unknown>)[name], `${name} in ${url.slice(0, 80)}`);
    }
});
