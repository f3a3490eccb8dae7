// The scoring kinds (issue 25; src/engine/kinds/): which kind scores which evaluator is read off one
// table, first match wins, and `next` goes on with the kinds after the one running. The runs resolve
// models only when a kind of the run uses one (Engine.needsModel). No server: the kinds are pure.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Engine } from '../src/engine/engine.ts';
import { kindOf, runKinds, type Kind } from '../src/engine/kinds/kind.ts';
import { COMPARING_KINDS, SCORING_KINDS } from '../src/engine/kinds/table.ts';
import { preparePair } from '../src/engine/pairwise.ts';
import type { JudgeModel } from '../src/engine/providers/model.ts';
import type { EvaluatorRecord } from '../src/store/types.ts';
import { loadConfig } from '../src/config.ts';

const evaluator = (fields: Partial<EvaluatorRecord>) => ({ id: 'ev_1', name: 'e', version: 1, kind: 'model', ...fields }) as EvaluatorRecord;
const GOOD = { request: 'What is 2+2?', response: 'It is 4.' };
const kindName = (fields: Partial<EvaluatorRecord>, input: Record<string, unknown> = GOOD, degenerate: string | null = null) =>
  kindOf(SCORING_KINDS, { evaluator: evaluator(fields), input: input as never, degenerate }).kind.name;

describe('the scoring kinds table', () => {
  test('each evaluator form is scored by its kind, in the table order', () => {
    assert.equal(kindName({}), 'tool');
    assert.equal(kindName({ scoring: 'logprobs' } as Partial<EvaluatorRecord>), 'logprobs');
    assert.equal(kindName({ models: ['m1', 'm2'] } as Partial<EvaluatorRecord>), 'jury');
    assert.equal(kindName({ models: ['m1', 'm2'] } as Partial<EvaluatorRecord>, { ...GOOD, use_cache: true }), 'cached');
    assert.equal(kindName({ kind: 'check' } as Partial<EvaluatorRecord>, { ...GOOD, use_cache: true }), 'checks');
    assert.equal(kindName({ kind: 'code' } as Partial<EvaluatorRecord>), 'checks');
    // A degenerate response scores 0 with every evaluator, check and code evaluators too.
    assert.equal(kindName({ kind: 'code' } as Partial<EvaluatorRecord>, GOOD, 'empty'), 'degenerate');
    assert.equal(kindName({}, { ...GOOD, use_cache: true }, 'empty'), 'degenerate');
  });

  test('the last kind of each table matches everything (a table never runs out)', () => {
    for (const table of [SCORING_KINDS, COMPARING_KINDS] as Array<ReadonlyArray<Kind<unknown, unknown, unknown>>>) {
      assert.equal(table.at(-1)!.matches({ evaluator: evaluator({ kind: 'anything' } as never) }), true);
    }
  });

  test('next goes on after the running kind, and a table that runs out is an error', async () => {
    const seen: string[] = [];
    const kind = (name: string, matches: boolean): Kind<object, object, string> => ({
      name,
      usesModel: false,
      matches: () => matches,
      run: async (job, next) => {
        seen.push(name);
        return name === 'last' ? 'done' : `${name}>${await next(job)}`;
      },
    });
    const table = [kind('wrap', true), kind('skipped', false), kind('inner', true), kind('last', true)];
    assert.equal(await runKinds(table, {}), 'wrap>inner>done');
    assert.deepEqual(seen, ['wrap', 'inner', 'last']);
    await assert.rejects(() => runKinds([kind('wrap', true)], {}), /no scoring kind/);
  });

  test('the runs resolve models only when a kind of the run uses one', () => {
    const engine = new Engine({ configured: false, call: async () => assert.fail('no model call') } as unknown as JudgeModel);
    const code = evaluator({ kind: 'code' } as Partial<EvaluatorRecord>);
    const model = evaluator({ id: 'ev_2' });
    assert.equal(engine.needsModel(engine.scoreSubjects([code], GOOD)), false);
    assert.equal(engine.needsModel(engine.scoreSubjects([code, model], GOOD)), true);
    assert.equal(engine.needsModel(engine.scoreSubjects([code, model], { ...GOOD, response: '' })), false, 'a degenerate response needs no model');
    const limits = loadConfig({}).limits;
    const pair = (a: string, b: string) => preparePair({ request: 'q', response_a: a, response_b: b }, [model], limits);
    assert.equal(engine.needsModel(engine.compareSubjects([model], pair('Four.', 'Five.'))), true);
    assert.equal(engine.needsModel(engine.compareSubjects([model], pair('Four.', 'Four.'))), false, 'identical responses tie by rule');
    assert.equal(engine.needsModel(engine.compareSubjects([code], pair('Four.', 'Five.'))), false);
  });
});
