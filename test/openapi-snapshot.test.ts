// The OpenAPI document has a snapshot, as each MCP tool has (test/__toolsnaps__): a path, field or
// answer that changes by accident fails here. After an intended change, regenerate with
//
//   UPDATE_OPENAPI_SNAPSHOT=1 node --import tsx --test test/openapi-snapshot.test.ts
//
// and review the diff of test/__snapshots__/openapi.json like code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../src/openapi.ts';

const SNAPSHOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '__snapshots__', 'openapi.json');

test('the OpenAPI document matches its snapshot', () => {
  const now = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
  if (process.env.UPDATE_OPENAPI_SNAPSHOT === '1') fs.writeFileSync(SNAPSHOT, now);
  assert.ok(fs.existsSync(SNAPSHOT), 'no snapshot yet: run with UPDATE_OPENAPI_SNAPSHOT=1 and commit test/__snapshots__/openapi.json');
  const saved = fs.readFileSync(SNAPSHOT, 'utf8');
  if (saved === now) return;
  // Name the first operations that differ rather than printing two documents of a megabyte.
  const a = JSON.parse(saved).paths as Record<string, unknown>;
  const b = JSON.parse(now).paths as Record<string, unknown>;
  const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((p) => JSON.stringify(a[p]) !== JSON.stringify(b[p]));
  assert.fail(
    `the OpenAPI document changed (${changed.length ? `paths: ${changed.slice(0, 10).join(', ')}` : 'outside paths'}); if intended, regenerate with UPDATE_OPENAPI_SNAPSHOT=1 (see the top of this file)`,
  );
});
