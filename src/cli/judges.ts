// tribunal judges list|get|create|update|delete|run|generate (and export|import|duplicate|claim: judge-files.ts)
import { num, oneOf, runGroup, str, list, type Command } from './command.ts';
import { resolveId, type ApiClient } from './client.ts';
import { EXIT, usageError } from './errors.ts';
import { generateCommand } from './generate.ts';
import { judgeFileCommands } from './judge-files.ts';
import { proxyUrlCommand } from './proxy-url.ts'; // h-proxy
import { clip, day, printJson, printNextPage, printTable } from './output.ts';
import { printJudge, type JudgeFull } from './judge-view.ts';
import { confirm, isInteractive } from './prompt.ts';
import { defined, inFlagTerms, printRunResult, readJsonObject, RUN_HELP, RUN_OPTIONS, runInputFromFlags, type Group, type RunResult } from './shared.ts';

const VISIBILITY = ['private', 'public'] as const;

const list_: Command = {
  summary: "list your organization's judges (--public: others' public ones too), newest first",
  help: `Usage: tribunal judges list [--search <text>] [--project <id>] [--public] [--limit N] [--cursor C | --all]

  --search <text>   match names, intents and stages (case-insensitive)
  --project <id>    only judges of this project
  --public          also other organizations' public judges (OWNER says whose)
  --own             only your organization's judges (the default)
  --limit <n>       page size (default 50, at most 200)
  --cursor <c>      the next page (printed under a list that has more)
  --all             every page`,
  options: {
    search: { type: 'string' },
    project: { type: 'string' },
    own: { type: 'boolean' },
    public: { type: 'boolean' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean' },
  },
  async run({ values, json, client }) {
    if (values.own && values.public) throw usageError('give --own or --public, not both.');
    const query = { search: str(values.search), project_id: str(values.project), include_public: values.public ? true : undefined };
    const page = values.all
      ? { results: await client().listAll('/v1/judges/', query), next_cursor: null }
      : await client().get('/v1/judges/', { ...query, limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      // With others' public judges, two can share a name: OWNER says whose each is (issue 26).
      const mine = values.public ? await ownProjects(client()) : null;
      printTable(
        ['ID', 'NAME', 'STAGE', 'EVALUATORS', 'VISIBILITY', ...(mine ? ['OWNER'] : []), 'UPDATED'],
        page.results.map((j: JudgeFull) => [
          j.id,
          clip(j.name, 40),
          clip(j.stage, 20),
          j.evaluators.length,
          j.visibility,
          ...(mine ? [mine.has(j.project_id) ? 'you' : 'another org'] : []),
          day(j.updated_at),
        ]),
      );
      printNextPage(page.next_cursor, 'tribunal judges list');
    }
    return EXIT.ok;
  },
};

const get: Command = {
  summary: 'show a judge with every evaluator it applies',
  help: `Usage: tribunal judges get <id or exact name> [--version N]

  --version <n>   an earlier version (default the latest)`,
  options: { version: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const id = await resolveId(client(), 'judge', positionals[0]);
    const judge = await client().get<JudgeFull>(`/v1/judges/${encodeURIComponent(id)}/`, { version: num(values.version, 'version', { min: 1, integer: true }) });
    if (json) printJson(judge);
    else printJudge(judge);
    return EXIT.ok;
  },
};

const JUDGE_FIELDS_HELP = `  --name <name>          judge name, unique in your organization
  --intent <text>        what the judge evaluates: the application and the stage
  --evaluator <id|name>  an evaluator to apply, in order (repeat; ids or exact names, presets too)
  --stage <stage>        the application stage it evaluates
  --visibility <v>       private or public
  --project <id>         project for the judge
  --file <path>          a JSON body with the same fields (name, intent, evaluator_ids, ...); flags override it`;

/** A create or update body: --file's object, then the flags given (create and update differ only in how stage and pinning are said). */
function judgeBody(values: Record<string, string | boolean | string[] | undefined>, own: { stage: string | null | undefined; pin_versions: boolean | undefined }) {
  return {
    ...readJsonObject(str(values.file)),
    ...defined({
      name: str(values.name),
      intent: str(values.intent),
      evaluator_ids: list(values.evaluator),
      stage: own.stage,
      visibility: oneOf(values.visibility, 'visibility', VISIBILITY),
      project_id: str(values.project),
      pin_versions: own.pin_versions,
    }),
  };
}

const create: Command = {
  summary: 'create a judge from an explicit list of evaluators',
  help: `Usage: tribunal judges create --name <name> --intent <text> --evaluator <id|name> [--evaluator ...] [options]

${JUDGE_FIELDS_HELP}
  --pin-versions         pin each evaluator at its current version`,
  options: {
    name: { type: 'string' },
    intent: { type: 'string' },
    evaluator: { type: 'string', multiple: true },
    stage: { type: 'string' },
    visibility: { type: 'string' },
    project: { type: 'string' },
    file: { type: 'string' },
    'pin-versions': { type: 'boolean' },
  },
  async run({ values, json, client }) {
    const body = judgeBody(values, { stage: str(values.stage), pin_versions: values['pin-versions'] ? true : undefined });
    for (const [field, flag] of [
      ['name', '--name'],
      ['intent', '--intent'],
      ['evaluator_ids', '--evaluator'],
    ] as const) {
      if (body[field] === undefined) throw usageError(`${flag} is required (see tribunal judges create --help).`);
    }
    const judge = await client().post<JudgeFull>('/v1/judges/', body);
    if (json) printJson(judge);
    else console.log(`Created judge ${judge.name} (${judge.id}) with ${judge.evaluators.length} evaluator(s): ${judge.evaluators.map((e) => e.name).join(', ')}.`);
    return EXIT.ok;
  },
};

const update: Command = {
  summary: 'edit a judge (only the fields given change; makes a new version)',
  help: `Usage: tribunal judges update <id or exact name> [options]

${JUDGE_FIELDS_HELP.replace('an evaluator to apply, in order', 'the new full evaluator list, in order')}
  --clear-stage          remove the stage
  --pin-versions         pin every evaluator at its current version
  --unpin-versions       follow every evaluator's latest version`,
  options: {
    name: { type: 'string' },
    intent: { type: 'string' },
    evaluator: { type: 'string', multiple: true },
    stage: { type: 'string' },
    'clear-stage': { type: 'boolean' },
    visibility: { type: 'string' },
    project: { type: 'string' },
    file: { type: 'string' },
    'pin-versions': { type: 'boolean' },
    'unpin-versions': { type: 'boolean' },
  },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    if (values.stage !== undefined && values['clear-stage']) throw usageError('give --stage or --clear-stage, not both.');
    if (values['pin-versions'] && values['unpin-versions']) throw usageError('give --pin-versions or --unpin-versions, not both.');
    const body = judgeBody(values, {
      stage: values['clear-stage'] ? null : str(values.stage),
      pin_versions: values['pin-versions'] ? true : values['unpin-versions'] ? false : undefined,
    });
    if (!Object.keys(body).length) throw usageError('nothing to change: give at least one of --name, --intent, --evaluator, --stage, --visibility, --project, --file.');
    const id = await resolveId(client(), 'judge', positionals[0]);
    const judge = await client().patch<JudgeFull>(`/v1/judges/${encodeURIComponent(id)}/`, body);
    if (json) printJson(judge);
    else console.log(`Updated judge ${judge.name} (${judge.id}); now version ${judge.version}.`);
    return EXIT.ok;
  },
};

const delete_: Command = {
  summary: 'delete a judge (its execution logs stay)',
  help: `Usage: tribunal judges delete <id or exact name> [--yes]

  --yes   do not ask for confirmation (required when there is no terminal)`,
  options: { yes: { type: 'boolean', short: 'y' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const id = await resolveId(client(), 'judge', positionals[0]);
    if (!values.yes) {
      if (!isInteractive()) throw usageError('deleting needs --yes when there is no terminal to confirm on.');
      if (!(await confirm(`Delete judge ${positionals[0]}${positionals[0] === id ? '' : ` (${id})`}?`))) {
        console.error('Not deleted.');
        return EXIT.ok;
      }
    }
    const result = await client().delete(`/v1/judges/${encodeURIComponent(id)}/`);
    if (json) printJson(result);
    else console.log(`Deleted judge ${id}.`);
    return EXIT.ok;
  },
};

const run: Command = {
  summary: 'score one request/response pair with a judge',
  help: `Usage: tribunal judges run <id or exact name> --response <text> [options]

${RUN_HELP}`,
  options: RUN_OPTIONS,
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const body = runInputFromFlags(values);
    const id = await resolveId(client(), 'judge', positionals[0]);
    const result = await client()
      .post<RunResult>(`/v1/judges/${encodeURIComponent(id)}/execute/`, body)
      .catch((err) => Promise.reject(inFlagTerms(err)));
    printRunResult(`Judge ${positionals[0]}`, result, json);
    return EXIT.ok;
  },
};

const judgeCommands: Group = { list: list_, get, create, update, delete: delete_, run, generate: generateCommand, 'proxy-url': proxyUrlCommand, ...judgeFileCommands };

export function judges(argv: string[]): Promise<number> {
  return runGroup('judges', 'Judges are named sets of evaluators for one stage of an application.', judgeCommands, argv);
}

/** The ids of the caller's own projects: what tells its resources from other organizations' public ones. */
export async function ownProjects(api: ApiClient): Promise<Set<string>> {
  return new Set((await api.listAll<{ id: string }>('/v1/projects/', {})).map((p) => p.id));
}
