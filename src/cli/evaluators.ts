// tribunal evaluators list|get|create|update|delete|run
import { oneOf, runGroup, str, type Values } from './command.ts';
import { usageError } from './errors.ts';
import { clip, day, printFields, printTable } from './output.ts';
import { defined, readJsonObject, readText, RUN_HELP, RUN_OPTIONS, runInputFromFlags, type Group } from './shared.ts';
import { declaredInputs } from './judge-view.ts';
import { createCommand, deleteCommand, executeCommand, listCommand, showCommand, updateCommand } from './versioned-commands.ts';
import type { Evaluator } from '../schemas/core.ts'; // the wire type, from the zod schema (one source of truth)

const needs = (e: Evaluator) => declaredInputs(e);

const list_ = listCommand<Evaluator>('evaluator', {
  summary: "list evaluators (yours and the shipped presets; --public: others' public ones too)",
  help: `Usage: tribunal evaluators list [--search <text>] [--presets | --no-presets] [--own | --public] [--project <id>] [--limit N] [--cursor C | --all]

  --search <text>   match names and intents (case-insensitive)
  --presets         only the shipped presets
  --no-presets      leave the presets out
  --own             only your organization's evaluators (no presets)
  --public          also other organizations' public evaluators (KIND says whose)
  --project <id>    only evaluators of this project
  --limit <n>       page size (default 50, at most 200)
  --cursor <c>      the next page
  --all             every page`,
  options: {
    search: { type: 'string' },
    presets: { type: 'boolean' },
    'no-presets': { type: 'boolean' },
    own: { type: 'boolean' },
    public: { type: 'boolean' },
    project: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean' },
  },
  query(values) {
    if (values.presets && values['no-presets']) throw usageError('give --presets or --no-presets, not both.');
    return {
      search: str(values.search),
      project_id: str(values.project),
      include_public: values.public ? true : undefined,
      is_preset: values.presets ? true : values['no-presets'] || values.own ? false : undefined,
    };
  },
  printRows: (results, mine) =>
    printTable(
      ['ID', 'NAME', 'KIND', 'NEEDS', 'INTENT'],
      results.map((e) => [
        e.id,
        clip(e.name, 36),
        e.is_preset ? 'preset' : mine && !mine.has(e.project_id ?? '') ? 'public, another org' : e.visibility,
        needs(e),
        clip(e.intent, 60),
      ]),
    ),
});

const get = showCommand<Evaluator>('evaluator', {
  summary: 'show an evaluator with its rubric and required inputs',
  help: 'Usage: tribunal evaluators get <id or exact name>',
  print: (e) =>
    printFields([
      ['id', e.id],
      ['name', e.name],
      ['kind', e.is_preset ? 'preset (read-only)' : e.visibility],
      ['intent', e.intent],
      ['needs', needs(e)],
      ['model', e.models?.length ? `jury of ${e.models.join(', ')} (${e.aggregation ?? 'mean'})` : (e.model ?? 'server default')],
      ['scoring', e.scoring === 'logprobs' ? 'logprobs (weighted 1-5 grade)' : null],
      ['demonstrations', e.demonstrations.length],
      ['project', e.project_id],
      ['version', e.version],
      ['updated', day(e.updated_at)],
      ['rubric', e.rubric],
    ]),
});

const FIELD_OPTIONS = {
  name: { type: 'string' },
  intent: { type: 'string' },
  rubric: { type: 'string' },
  'rubric-file': { type: 'string' },
  'requires-contexts': { type: 'boolean' },
  'no-requires-contexts': { type: 'boolean' },
  'requires-expected-output': { type: 'boolean' },
  'no-requires-expected-output': { type: 'boolean' },
  'demonstrations-file': { type: 'string' },
  model: { type: 'string' },
  visibility: { type: 'string' },
  project: { type: 'string' },
  file: { type: 'string' },
  // h-checks: evaluators without a model
  kind: { type: 'string' },
  'checks-file': { type: 'string' },
  combine: { type: 'string' },
  'code-file': { type: 'string' },
} as const;

const FIELDS_HELP = `  --name <name>                  evaluator name, unique in your organization
  --intent <text>                what it measures, one or two sentences
  --rubric <text>                what earns a high, a middling and a low score
  --rubric-file <path>           read the rubric from a file
  --requires-contexts            runs must pass contexts (--no-requires-contexts to undo)
  --requires-expected-output     runs must pass expected_output (--no-requires-expected-output to undo)
  --demonstrations-file <path>   JSON array of scored examples [{response, score, request?, ...}]
  --model <name>                 judge model override
  --visibility <v>               private or public
  --project <id>                 project for the evaluator
  --file <path>                  a JSON body with the same fields; flags override it
  --kind <kind>                  llm (default: the judge model and the rubric), check or code (no model)
  --checks-file <path>           kind check: JSON array of checks [{"type": "json_valid"}, {"type": "regex", "pattern": "..."}]
  --combine <how>                kind check: all (default), any or fraction
  --code-file <path>             kind code: a file with the body of a JavaScript score(input)`;

function flag(values: Values, name: string): boolean | undefined {
  if (values[name] && values[`no-${name}`]) throw usageError(`give --${name} or --no-${name}, not both.`);
  return values[name] ? true : values[`no-${name}`] ? false : undefined;
}

function evaluatorBody(values: Values): Record<string, unknown> {
  if (values.rubric !== undefined && values['rubric-file'] !== undefined) throw usageError('give --rubric or --rubric-file, not both.');
  const rubricFile = str(values['rubric-file']);
  let demonstrations: unknown;
  const demoFile = str(values['demonstrations-file']);
  if (demoFile !== undefined) {
    try {
      demonstrations = JSON.parse(readText(demoFile, '--demonstrations-file'));
    } catch (err) {
      if ((err as Error).name === 'CliError') throw err;
      throw usageError(`--demonstrations-file: ${demoFile} is not valid JSON (${(err as Error).message}).`);
    }
    if (!Array.isArray(demonstrations)) throw usageError('--demonstrations-file must hold a JSON array of examples.');
  }
  return {
    ...readJsonObject(str(values.file)),
    ...defined({
      name: str(values.name),
      intent: str(values.intent),
      rubric: rubricFile !== undefined ? readText(rubricFile, '--rubric-file') : str(values.rubric),
      requires_contexts: flag(values, 'requires-contexts'),
      requires_expected_output: flag(values, 'requires-expected-output'),
      demonstrations,
      model: str(values.model),
      visibility: oneOf(values.visibility, 'visibility', ['private', 'public'] as const),
      project_id: str(values.project),
      ...kindFields(values),
    }),
  };
}

/** h-checks: --kind, --checks-file, --combine, --code-file. */
function kindFields(values: Values): Record<string, unknown> {
  const checksFile = str(values['checks-file']);
  let checks: unknown;
  if (checksFile !== undefined) {
    try {
      checks = JSON.parse(readText(checksFile, '--checks-file'));
    } catch (err) {
      if ((err as Error).name === 'CliError') throw err;
      throw usageError(`--checks-file: ${checksFile} is not valid JSON (${(err as Error).message}).`);
    }
    if (!Array.isArray(checks)) throw usageError('--checks-file must hold a JSON array of checks.');
  }
  const codeFile = str(values['code-file']);
  return {
    kind: oneOf(values.kind, 'kind', ['llm', 'check', 'code'] as const),
    checks,
    combine: oneOf(values.combine, 'combine', ['all', 'any', 'fraction'] as const),
    code: codeFile !== undefined ? readText(codeFile, '--code-file') : undefined,
  };
}

const create = createCommand<Evaluator>('evaluator', {
  summary: 'create an evaluator with its rubric',
  help: `Usage: tribunal evaluators create --name <name> --intent <text> --rubric <text> [options]
       tribunal evaluators create --name <name> --intent <text> --kind check --checks-file <path>
       tribunal evaluators create --name <name> --intent <text> --kind code --code-file <path>

${FIELDS_HELP}`,
  options: FIELD_OPTIONS,
  body: evaluatorBody,
  // A check or code evaluator describes itself: no rubric needed (h-checks).
  required: (body) => ['name', 'intent', ...(body.kind === 'check' || body.kind === 'code' ? [] : ['rubric'])].map((field) => [field, `--${field}`] as const),
  created: (e) => `Created evaluator ${e.name} (${e.id}), version ${e.version}.`,
});

const update = updateCommand('evaluator', {
  summary: 'edit an evaluator (only the fields given change; makes a new version)',
  help: `Usage: tribunal evaluators update <id or exact name> [options]

${FIELDS_HELP}`,
  options: FIELD_OPTIONS,
  body: evaluatorBody,
  nothingToChange: 'nothing to change: give at least one field (see tribunal evaluators update --help).',
});

const delete_ = deleteCommand('evaluator', 'delete an evaluator that no judge uses');

const run = executeCommand('evaluator', {
  summary: 'score one request/response pair with a single evaluator',
  help: `Usage: tribunal evaluators run <id or exact name> --response <text> [options]

${RUN_HELP}
  --project <id>            project the execution log is filed under`,
  options: { ...RUN_OPTIONS, project: { type: 'string' } },
  body: (values) => ({ ...runInputFromFlags(values), project_id: str(values.project) }),
});

const evaluatorCommands: Group = { list: list_, get, create, update, delete: delete_, run };

export function evaluators(argv: string[]): Promise<number> {
  return runGroup('evaluators', 'Evaluators score one quality of a response from 0 to 1, with a written justification.', evaluatorCommands, argv);
}
