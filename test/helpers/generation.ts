// Shared setup for the judge-generation tests (REST and MCP): the fake judge model, a real server
// pointed at it, a regular (private-by-default) organization and a demo one, and builders for the
// answers of the three generation steps (identify_stages, assess_context, design_judge).
import { createOrganization } from '../../src/domain/orgs.ts';
import { startServerWithFakeModel } from './execute.ts';
import { toolAnswer, type FakeAnswer, type FakeAnthropic } from './fake-anthropic.ts';
import type { TestServer } from './server.ts';

export interface GenerationRig {
  fake: FakeAnthropic;
  server: TestServer;
  /** A regular organization: generated judges are private unless asked otherwise. */
  org: { key: string; id: string; projectId: string };
  /** A demo organization: everything it makes is public. */
  demo: { key: string; id: string; projectId: string };
  /** Another regular organization, for foreign-id checks. */
  other: { key: string; id: string; projectId: string };
  post(path: string, body: unknown, key?: string): Promise<{ status: number; body: any }>;
  get(path: string, key?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startGenerationRig(env: Record<string, string | undefined> = {}): Promise<GenerationRig> {
  const { fake, server } = await startServerWithFakeModel(env);
  const regular = async (name: string) => {
    const made = await createOrganization(server.store, { name, isDemo: false });
    return { key: made.api_key, id: made.organization.id, projectId: made.project_id };
  };
  const org = await regular('Acme');
  const other = await regular('Globex');
  const d = await server.demoUser();
  const demo = { key: d.api_key, id: d.organization_id, projectId: d.project_id };
  return {
    fake,
    server,
    org,
    demo,
    other,
    post: (path, body, key = org.key) => server.request('POST', path, { key, body }),
    get: (path, key = org.key) => server.request('GET', path, { key }),
    async close() {
      await server.close();
      await fake.close();
    },
  };
}

export const stagesAnswer = (...names: string[]): FakeAnswer => toolAnswer({ stages: names.map((name) => ({ name, description: `the ${name} step` })) });

export const contextAnswer = (missing: Array<[name: string, question: string]>, presetIds: string[] = ['preset_helpfulness'], judgeName = 'Support reply judge'): FakeAnswer =>
  toolAnswer({
    judge_name: judgeName,
    missing_context: missing.map(([form_field_name, form_field_description]) => ({ form_field_name, form_field_description })),
    preset_ids: presetIds,
  });

/** A new evaluator as the design step gives it: the rubric in parts (assembled in the presets' style). */
export function newEvaluator(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    intent: `Measures whether the reply follows the ${name.toLowerCase()} expected by the application.`,
    rubric: {
      what_to_judge: `Judge the reply against the ${name.toLowerCase()} described for this application.`,
      high: 'the reply fully follows it, with no lapse a customer would notice.',
      middling: 'the reply mostly follows it but has one or two noticeable lapses.',
      low: 'the reply ignores or contradicts it.',
      ignore: 'factual accuracy and length, which other evaluators measure.',
    },
    ...extra,
  };
}

export const designAnswer = (opts: { presets?: string[]; evaluators?: unknown[]; name?: string } = {}): FakeAnswer =>
  toolAnswer({
    judge_name: opts.name ?? 'Support reply judge',
    preset_ids: opts.presets ?? ['preset_helpfulness', 'preset_politeness'],
    new_evaluators: opts.evaluators ?? [newEvaluator('Brand Voice')],
  });

/** The tool names of the model requests made since the last resetStats, in order. */
export const calledTools = (fake: FakeAnthropic) => fake.requests.map((r) => r.toolName);
