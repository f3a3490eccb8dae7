// issue 26 item 2: where two judges or evaluators share a name, the web app's pickers say whose each is.
// The web module itself, imported as the browser does.
import assert from 'node:assert/strict';
import { test } from 'node:test';

type R = { id: string; name: string; is_preset?: boolean; project_id: string | null };

test('ownerLabels names the owner only where a name is shared', async () => {
  const path: string = '../src/web/public/lib/owner.js';
  const { ownerLabels } = (await import(path)) as { ownerLabels: (list: R[], own: Set<string>) => Map<string, string> };
  const list: R[] = [
    { id: 'evl_1', name: 'Support answers', project_id: 'prj_mine' },
    { id: 'evl_2', name: 'Support answers', project_id: 'prj_theirs' },
    { id: 'evl_3', name: 'Clarity', is_preset: true, project_id: null },
    { id: 'evl_4', name: 'Clarity', project_id: 'prj_mine' },
    { id: 'evl_5', name: 'Grounded', project_id: 'prj_mine' },
  ];
  const labels = ownerLabels(list, new Set(['prj_mine']));
  assert.deepEqual(Object.fromEntries(labels), {
    evl_1: 'Support answers (yours)',
    evl_2: 'Support answers (another organization)',
    evl_3: 'Clarity (preset)',
    evl_4: 'Clarity (yours)',
    evl_5: 'Grounded',
  });
});
