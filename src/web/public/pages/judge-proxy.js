// h-proxy: the judge page's "Inline judging" section: the judge proxy's URL with copyable snippets
// for the OpenAI SDK (TypeScript, Python) and the Vercel AI SDK, and the judge's guardrail.
import { h } from '../lib/dom.js';
import { copyField } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').Judge} j
 */
export function proxySection(j) {
  const base = `${location.origin}/v1/judges/${encodeURIComponent(j.id)}/openai`;
  const model = '<registered model name>';
  const snippets = [
    [
      'OpenAI SDK (TypeScript)',
      `import OpenAI from 'openai';\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.TRIBUNAL_API_KEY });\nconst reply = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(reply.tribunal); // {execution_log_id, score, evaluator_results}`,
    ],
    [
      'OpenAI SDK (Python)',
      `from openai import OpenAI\nclient = OpenAI(base_url="${base}", api_key=os.environ["TRIBUNAL_API_KEY"])\nreply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])\nprint(reply.tribunal)`,
    ],
    [
      'Vercel AI SDK',
      `import { createOpenAICompatible } from '@ai-sdk/openai-compatible';\nimport { generateText } from 'ai';\nconst tribunal = createOpenAICompatible({ name: 'tribunal', baseURL: '${base}', apiKey: process.env.TRIBUNAL_API_KEY });\nconst { text } = await generateText({ model: tribunal('${model}'), prompt: 'Hello' });`,
    ],
  ];
  const g = j.guardrail;
  return h(
    'section',
    { 'aria-labelledby': 'proxy-title', class: 'card proxy-section' },
    h('h2', { id: 'proxy-title' }, 'Inline judging (OpenAI-compatible proxy)'),
    h(
      'p',
      { class: 'muted' },
      'Point an OpenAI client at this URL with your Tribunal API key: every answer of your registered model (Models page) comes back judged, with a tribunal object. Add ?async_judge=true to judge after answering.',
    ),
    copyField(base, 'Proxy base URL'),
    h(
      'p',
      { class: 'small guardrail-summary' },
      h('strong', {}, 'Guardrail: '),
      g ? `${g.action} below ${g.threshold}${g.message ? ` (“${g.message}”)` : ''}` : 'none (set one in Edit)',
    ),
    ...snippets.map(([label, code]) => h('details', {}, h('summary', {}, label), h('pre', { class: 'mono snippet' }, code))),
  );
}

/**
 * The guardrail controls of the judge form, and the body field they make (undefined: unchanged).
 * @param {import('../lib/types.js').Judge | null} editing the judge being edited; null for a new one
 * @param {typeof import('../lib/ui.js').field} field
 * @param {typeof import('../lib/ui.js').select} select

 */
export function guardrailFields(editing, field, select) {
  const g = editing?.guardrail ?? null;
  const action = select(
    'guardrail_action',
    [
      ['', 'None'],
      ['flag', 'Flag answers below the threshold'],
      ['block', 'Block answers below the threshold'],
    ],
    g?.action ?? '',
  );
  const threshold = h('input', { type: 'number', min: '0', max: '1', step: '0.05', value: String(g?.threshold ?? 0.5) });
  const message = h('input', { type: 'text', value: g?.message ?? '', placeholder: 'a neutral refusal' });
  const fieldset = h(
    'fieldset',
    { 'data-field': 'guardrail' },
    h('legend', {}, 'Guardrail (judge proxy)'),
    field({ label: 'Guardrail action', name: 'guardrail_action', hint: 'For answers judged inline through the proxy.' }, action),
    field({ label: 'Guardrail threshold', name: 'guardrail_threshold', hint: 'Run score below which the action applies (0..1).' }, threshold),
    field({ label: 'Block message', name: 'guardrail_message', hint: 'What a blocked answer is replaced with.' }, message),
  );
  const value = () => {
    if (!action.value) return editing?.guardrail ? null : undefined;
    return { threshold: Number(threshold.value), action: action.value, ...(message.value.trim() ? { message: message.value.trim() } : {}) };
  };
  return { fieldset, value };
}
