// tribunal judges proxy-url <id or exact name> (h-proxy): the judge proxy's base URL for an OpenAI
// client (SPEC section 13), with a copyable snippet for the OpenAI SDKs and the Vercel AI SDK.
import type { Command } from './command.ts';
import { resolveId } from './client.ts';
import { EXIT } from './errors.ts';
import { printJson } from './output.ts';

export function proxySnippets(baseUrl: string, model = '<registered model name>') {
  return {
    python: `from openai import OpenAI\nclient = OpenAI(base_url="${baseUrl}", api_key=os.environ["TRIBUNAL_API_KEY"])\nreply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])\nprint(reply.tribunal)  # {execution_log_id, score, evaluator_results}`,
    typescript: `import OpenAI from 'openai';\nconst client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.TRIBUNAL_API_KEY });\nconst reply = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log((reply as any).tribunal);`,
    vercel_ai: `import { createOpenAICompatible } from '@ai-sdk/openai-compatible';\nimport { generateText } from 'ai';\nconst tribunal = createOpenAICompatible({ name: 'tribunal', baseURL: '${baseUrl}', apiKey: process.env.TRIBUNAL_API_KEY });\nconst { text } = await generateText({ model: tribunal('${model}'), prompt: 'Hello' });`,
  };
}

export const proxyUrlCommand: Command = {
  summary: 'print the judge proxy URL to point an OpenAI client at, with snippets',
  help: `Usage: tribunal judges proxy-url <id or exact name> [--model <registered model>] [--json]

Prints the base URL of the judge's OpenAI-compatible proxy (chat completions and responses): set it
as the OpenAI client's base URL and your Tribunal API key as its api_key; every answer then comes
back judged. The model is the name of a model registered in your organization (tribunal models).`,
  options: { model: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const api = client();
    const id = await resolveId(api, 'judge', positionals[0]!);
    const base = `${api.url}/v1/judges/${encodeURIComponent(id)}/openai`;
    const snippets = proxySnippets(base, typeof values.model === 'string' ? values.model : undefined);
    if (json) printJson({ judge_id: id, base_url: base, chat_completions: `${base}/chat/completions`, responses: `${base}/responses`, snippets });
    else {
      console.log(base);
      console.log(`\nOpenAI SDK (TypeScript):\n${snippets.typescript}\n\nOpenAI SDK (Python):\n${snippets.python}\n\nVercel AI SDK:\n${snippets.vercel_ai}`);
    }
    return EXIT.ok;
  },
};
