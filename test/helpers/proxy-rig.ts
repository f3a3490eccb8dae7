// h-proxy: a Tribunal server judging with the fake Anthropic judge model, a fake OpenAI-compatible
// upstream (the application's model) registered in the caller's organization, and a judge.
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './execute.ts';

/** The registered upstream's key: a dummy the fake checks; never the caller's Tribunal key. */
export const UPSTREAM_KEY = 'sk-upstream-test-dummy';

export interface ProxyRig extends ScoringRig {
  upstream: FakeOpenAI;
  /** A judge with one evaluator (no guardrail). */
  judge: any;
  /** The OpenAI SDK pointed at a judge's proxy. */
  client(judgeId?: string, opts?: { apiKey?: string; query?: Record<string, string> }): OpenAI;
  /** A new judge with one new evaluator and the given extra fields. */
  newJudge(extra?: Record<string, unknown>, evaluator?: Record<string, unknown>): Promise<any>;
}

export async function startProxyRig(env: Record<string, string> = {}): Promise<ProxyRig> {
  const rig = await startScoringRig({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), ...env });
  const upstream = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
  upstream.reply = { content: 'Paris is the capital of France.' };
  const model = await rig.post('/v1/models/', {
    name: 'app-model',
    provider: 'openai',
    base_url: upstream.url,
    model: 'gpt-test',
    api_key: UPSTREAM_KEY,
    price: { input: 1, output: 2 },
  });
  if (model.status !== 201) throw new Error(`register model: ${model.status} ${JSON.stringify(model.body)}`);
  const newJudge = async (extra: Record<string, unknown> = {}, evaluator: Record<string, unknown> = {}) => {
    const e = await rig.createEvaluator(evaluatorBody(evaluator));
    return rig.createJudge({ name: `Proxy judge ${e.id}`, intent: 'Judges answers of a geography assistant.', evaluator_ids: [e.id], ...extra });
  };
  const judge = await newJudge();
  return {
    ...rig,
    upstream,
    judge,
    newJudge,
    client: (judgeId = judge.id, opts = {}) =>
      new OpenAI({ apiKey: opts.apiKey ?? rig.key, baseURL: `${rig.server.url}/v1/judges/${judgeId}/openai`, maxRetries: 0, defaultQuery: opts.query }),
    async close() {
      await rig.close();
      await upstream.close();
    },
  };
}

/** Polls a log until it exists (async judging writes it after the answer). */
export async function waitForLog(rig: ScoringRig, id: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await rig.get(`/v1/execution-logs/${id}/`);
    if (res.status === 200) return res.body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`log ${id} never appeared`);
}
