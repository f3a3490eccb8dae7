// The review page in Chromium (issue 31 item 5): two annotators in two browser contexts score one
// queue with the keyboard; the judge's verdict stays hidden until each has scored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const skip = !chromiumAvailable() && 'Chromium is not installed';
const MARK = /says-(\d\.\d+)/;

describe('review page in Chromium', { skip }, () => {
  let rig: ScoringRig;
  let one: BrowserRig;
  let two: BrowserRig;
  let queueId: string;
  let keyTwo: string;

  before(async () => {
    rig = await startScoringRig();
    const grounded = await rig.createEvaluator(evaluatorBody({ name: 'Review grounded' }));
    const judge = await rig.createJudge({ name: 'Review judge', intent: 'Judges support replies.', evaluator_ids: [grounded.id] });
    rig.fake.respondWith((req) => toolAnswer({ justification: `SECRET-JUSTIFICATION ${MARK.exec(req.prompt)?.[1]}`, score: Number(MARK.exec(req.prompt)?.[1] ?? 0.5) }));
    const q = await rig.post('/v1/review-queues/', { name: 'Support review', judge_id: judge.id, annotators_per_item: 2, sources: { sample_rate: 1 } });
    assert.equal(q.status, 201, JSON.stringify(q.body));
    queueId = q.body.id;
    for (const said of ['0.9', '0.2'])
      assert.equal((await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'When do you open?', response: `First reply says-${said}` })).status, 200);
    keyTwo = (await rig.post('/v1/api-keys/', { name: 'second reviewer' })).body.api_key;
    [one, two] = [await launchBrowser(), await launchBrowser()];
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await rig?.close();
  });

  async function signIn(b: BrowserRig, key: string) {
    await b.page.goto(`${rig.server.url}/app/sign-in`);
    await b.page.getByRole('textbox', { name: 'API key' }).fill(key);
    await b.page.getByRole('button', { name: 'Sign in' }).click();
    await b.page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await b.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review', exact: true }).click();
    await b.page.getByRole('heading', { level: 1, name: 'Review queues' }).waitFor();
    await b.page.getByRole('link', { name: 'Support review' }).click();
    await b.page.getByRole('heading', { level: 1, name: 'Review: Support review' }).waitFor();
  }

  it('two people score with the keyboard; the judge is hidden until each has scored; progress and agreement show', async () => {
    await signIn(one, rig.key);
    await signIn(two, keyTwo);
    for (const b of [one, two]) {
      await b.page.locator('.review-response').getByText('says-0.9').waitFor();
      assert.equal(await b.page.getByText(/SECRET-JUSTIFICATION/).count(), 0, 'the judge does not anchor the person');
    }
    // Person one: "8" in the focused score box, Enter submits; the judge's verdict appears; Enter goes on.
    await one.page.keyboard.press('8');
    assert.equal(await one.page.getByRole('spinbutton', { name: 'Score for Review grounded' }).inputValue(), '0.8');
    await one.page.keyboard.press('Enter');
    await one.page.getByText('SECRET-JUSTIFICATION 0.9').waitFor();
    await one.page.keyboard.press('Enter');
    await one.page.locator('.review-response').getByText('says-0.2').waitFor();
    // Person two scores the first item too (two people per item).
    await two.page.keyboard.press('9');
    await two.page.keyboard.press('Enter');
    await two.page.getByText('SECRET-JUSTIFICATION 0.9').waitFor();
    await two.page.getByText(/1 done/).waitFor();
    await two.page.keyboard.press('Enter');
    await two.page.locator('.review-response').getByText('says-0.2').waitFor();
    for (const [b, k] of [
      [one, '1'],
      [two, '2'],
    ] as const) {
      await b.page.keyboard.press(k);
      await b.page.keyboard.press('Enter');
      await b.page.getByText('SECRET-JUSTIFICATION 0.2').waitFor();
    }
    // Person two submitted last: their page shows both items done and the agreement so far.
    await two.page.getByText(/2 done/).waitFor();
    await two.page.getByText(/α -?\d\.\d\d \(2 items\)/).waitFor();
    await one.page.keyboard.press('Enter');
    await one.page.getByText('Nothing left for you in this queue.').waitFor();
    await one.screenshot('review-done');
    const q = await rig.get(`/v1/review-queues/${queueId}/`);
    assert.deepEqual(q.body.counts, { queued: 0, leased: 0, done: 2, skipped: 0 });
    assert.equal(q.body.agreement[0].n_annotations, 4);
    assert.deepEqual([...one.errors, ...two.errors], []);
  });
});
