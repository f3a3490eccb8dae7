// Shared setup for the scoring tests: a fake judge model, a real Tribunal server pointed at it
// (dummy key, tiny backoff so retries take milliseconds), and a demo caller.
import type { Config } from '../../src/config.ts';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface ScoringRig {
  fake: FakeAnthropic;
  server: TestServer;
  key: string;
  projectId: string;
  config: Config;
  /** POST /v1/evaluators/ as the rig's caller; returns the created evaluator. */
  createEvaluator(body: Record<string, unknown>): Promise<any>;
  /** POST /v1/judges/ as the rig's caller; returns the created judge. */
  createJudge(body: Record<string, unknown>): Promise<any>;
  post(path: string, body: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  get(path: string): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

/** A dummy key: never a real secret. The fake accepts any. */
export const DUMMY_KEY = 'sk-ant-test-dummy';

/**
 * The model the scoring and generation tests assert the wire form of (forced tool, thinking budget,
 * $3/$15 prices). The default model's form (tool_choice auto, adaptive thinking) has its own tests
 * in test/models.test.ts.
 */
export const TEST_MODEL = 'claude-sonnet-4-5';

/** A test server whose judge model is a fresh fake, with retries, timeouts and rate limits sized for tests. */
export async function startServerWithFakeModel(env: Record<string, string | undefined> = {}): Promise<{ fake: FakeAnthropic; server: TestServer }> {
  const fake = await startFakeAnthropic();
  const server = await startTestServer({
    ANTHROPIC_API_KEY: DUMMY_KEY,
    ANTHROPIC_BASE_URL: fake.url,
    TRIBUNAL_MODEL: TEST_MODEL,
    TRIBUNAL_MODEL_BACKOFF: '1ms',
    TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
    TRIBUNAL_MODEL_TIMEOUT: '5s',
    TRIBUNAL_RATE_LIMIT: '100000',
    ...env,
  });
  return { fake, server };
}

export async function startScoringRig(env: Record<string, string | undefined> = {}): Promise<ScoringRig> {
  const { fake, server } = await startServerWithFakeModel(env);
  const demo = await server.demoUser();
  const key = demo.api_key;
  const post = (path: string, body: unknown) => server.request('POST', path, { key, body });
  const get = (path: string) => server.request('GET', path, { key });
  const created = async (path: string, body: Record<string, unknown>) => {
    const res = await post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    fake,
    server,
    key,
    projectId: demo.project_id,
    config: server.config,
    createEvaluator: (body) => created('/v1/evaluators/', body),
    createJudge: (body) => created('/v1/judges/', body),
    post,
    get,
    async close() {
      await server.close();
      await fake.close();
    },
  };
}

let counter = 0;
/** A custom evaluator body with a unique name. */
export function evaluatorBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    name: `Test evaluator ${counter}`,
    intent: `Checks quality number ${counter}.`,
    rubric: 'High (1): fully correct and on topic. Middling (0.5): partly correct. Low (0): wrong or off topic.',
    ...overrides,
  };
}
