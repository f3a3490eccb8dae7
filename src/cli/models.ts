// tribunal models list|add|verify|delete: the organization's registered judge models (REST).
// The model's API key is read from an environment variable named with --key-env, never from the
// command line, where other users of the machine could read it in the process list.
import { num, oneOf, runGroup, str, type Command } from './command.ts';
import { EXIT, usageError } from './errors.ts';
import { clip, day, printFields, printJson, printNextPage, printTable } from './output.ts';
import { confirm, isInteractive } from './prompt.ts';
import { defined, oneRequestCommand, type Group } from './shared.ts';
import type { Model } from '../schemas/models.ts'; // the wire type, from the zod schema (one source of truth)

const path = (idOrName: string) => `/v1/models/${encodeURIComponent(idOrName)}/`;

const capabilities = (m: Model) =>
  m.capabilities
    ? Object.entries(m.capabilities)
        .flatMap(([k, v]) => (v ? [k] : []))
        .join(',') || 'json only'
    : 'not verified';

const list_: Command = {
  summary: "list your organization's registered judge models",
  help: `Usage: tribunal models list [--limit N] [--cursor C]`,
  options: { limit: { type: 'string' }, cursor: { type: 'string' } },
  async run({ values, json, client }) {
    const page = await client().get('/v1/models/', { limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      printTable(
        ['NAME', 'PROVIDER', 'MODEL', 'BASE URL', 'KEY', 'CAPABILITIES', 'CREATED'],
        page.results.map((m: Model) => [
          clip(m.name, 30),
          m.provider,
          clip(m.model, 30),
          clip(m.base_url ?? '(default)', 40),
          m.api_key_hint ? `…${m.api_key_hint}` : '',
          capabilities(m),
          day(m.created_at),
        ]),
      );
      printNextPage(page.next_cursor, 'tribunal models list');
    }
    return EXIT.ok;
  },
};

const add: Command = {
  summary: 'register a judge model',
  help: `Usage: tribunal models add <name> --provider anthropic|openai --model <id> [options]

  --provider <p>          anthropic (Messages API) or openai (Chat Completions: OpenAI, vLLM, Ollama, ...)
  --model <id>            the provider's own model id
  --base-url <url>        the endpoint, e.g. http://127.0.0.1:11434/v1; default the provider's public API
  --key-env <VAR>         read the model's API key from this environment variable (never pass it as an argument)
  --max-concurrency <n>   calls in flight at once (default 4)
  --price <in,out>        USD per million input and output tokens, e.g. 0.15,0.6
  --attachments           the model takes images and PDFs (runs with attachments may use it)`,
  options: {
    provider: { type: 'string' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    'key-env': { type: 'string' },
    'max-concurrency': { type: 'string' },
    price: { type: 'string' },
    attachments: { type: 'boolean' },
  },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const provider = oneOf(values.provider, 'provider', ['anthropic', 'openai'] as const);
    if (!provider) throw usageError('--provider is required (anthropic or openai).');
    const model = str(values.model);
    if (!model) throw usageError("--model is required (the provider's model id).");
    let apiKey: string | undefined;
    const keyEnv = str(values['key-env']);
    if (keyEnv) {
      apiKey = process.env[keyEnv];
      if (!apiKey) throw usageError(`--key-env ${keyEnv}: that environment variable is not set or empty.`);
    }
    let price: { input: number; output: number } | undefined;
    if (values.price !== undefined) {
      const parts = String(values.price).split(',').map(Number);
      if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n) || n < 0)) throw usageError('--price must be <input>,<output> in USD per million tokens, e.g. 0.15,0.6.');
      price = { input: parts[0], output: parts[1] };
    }
    const body = defined({
      name: positionals[0],
      provider,
      model,
      base_url: str(values['base-url']),
      api_key: apiKey,
      max_concurrency: num(values['max-concurrency'], 'max-concurrency', { min: 1, integer: true }),
      price,
      supports_attachments: values.attachments === true ? true : undefined,
    });
    const made = await client().post<Model>('/v1/models/', body);
    if (json) printJson(made);
    else console.log(`Registered model ${made.name} (${made.id}). Next: tribunal models verify ${made.name}`);
    return EXIT.ok;
  },
};

const verify = oneRequestCommand(
  'check a model with one tiny real call and store what it supports',
  `Usage: tribunal models verify <id or name>`,
  (api, ref) => api.post<Model>(`${path(ref)}verify/`),
  (m) =>
    printFields([
      ['model', `${m.name} (${m.provider}, ${m.model})`],
      ['capabilities', capabilities(m)],
      ['verified', day(m.verified_at)],
    ]),
);

const delete_: Command = {
  summary: 'delete a registered model (evaluators naming it stop scoring)',
  help: `Usage: tribunal models delete <id or name> [--yes]

  --yes   do not ask for confirmation (required when there is no terminal)`,
  options: { yes: { type: 'boolean', short: 'y' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    if (!values.yes) {
      if (!isInteractive()) throw usageError('deleting needs --yes when there is no terminal to confirm on.');
      if (!(await confirm(`Delete model ${positionals[0]}?`))) {
        console.error('Not deleted.');
        return EXIT.ok;
      }
    }
    const result = await client().delete<Model>(path(positionals[0]));
    if (json) printJson(result);
    else console.log(`Deleted model ${result.name} (${result.id}).`);
    return EXIT.ok;
  },
};

const modelCommands: Group = { list: list_, add, verify, delete: delete_ };

export function models(argv: string[]): Promise<number> {
  return runGroup('models', "Your organization's own judge models (docs/SCORING.md, registered models).", modelCommands, argv);
}
