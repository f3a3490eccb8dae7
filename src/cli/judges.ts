// tribunal judges list|get|create|update|delete|run|generate (and export|import|duplicate|claim: judge-files.ts)
import { num, oneOf, runGroup, str, list, type Values } from './command.ts';
import { usageError } from './errors.ts';
import { generateCommand } from './generate.ts';
import { judgeFileCommands } from './judge-files.ts';
import { proxyUrlCommand } from './proxy-url.ts'; // h-proxy
import { clip, day, printTable } from './output.ts';
import { printJudge, type JudgeFull } from './judge-view.ts';
import { defined, readJsonObject, RUN_HELP, RUN_OPTIONS, runInputFromFlags, type Group } from './shared.ts';
import { createCommand, deleteCommand, executeCommand, listCommand, showCommand, updateCommand } from './versioned-commands.ts';

const VISIBILITY = ['private', 'public'] as const;

const list_ = listCommand<JudgeFull>('judge', {
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
  query: (values) => ({ search: str(values.search), project_id: str(values.project), include_public: values.public ? true : undefined }),
  printRows: (results, mine) =>
    printTable(
      ['ID', 'NAME', 'STAGE', 'EVALUATORS', 'VISIBILITY', ...(mine ? ['OWNER'] : []), 'UPDATED'],
      results.map((j) => [
        j.id,
        clip(j.name, 40),
        clip(j.stage, 20),
        j.evaluators.length,
        j.visibility,
        ...(mine ? [mine.has(j.project_id) ? 'you' : 'another org'] : []),
        day(j.updated_at),
      ]),
    ),
});

const get = showCommand<JudgeFull>('judge', {
  summary: 'show a judge with every evaluator it applies',
  help: `Usage: tribunal judges get <id or exact name> [--version N]

  --version <n>   an earlier version (default the latest)`,
  options: { version: { type: 'string' } },
  query: (values) => ({ version: num(values.version, 'version', { min: 1, integer: true }) }),
  print: printJudge,
});

const JUDGE_FIELDS_HELP = `  --name <name>          judge name, unique in your organization
  --intent <text>        what the judge evaluates: the application and the stage
  --evaluator <id|name>  an evaluator to apply, in order (repeat; ids or exact names, presets too)
  --stage <stage>        the application stage it evaluates
  --visibility <v>       private or public
  --project <id>         project for the judge
  --file <path>          a JSON body with the same fields (name, intent, evaluator_ids, ...); flags override it`;

/** A create or update body: --file's object, then the flags given (create and update differ only in how stage and pinning are said). */
function judgeBody(values: Values, own: { stage: string | null | undefined; pin_versions: boolean | undefined }) {
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

const create = createCommand<JudgeFull>('judge', {
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
  body: (values) => judgeBody(values, { stage: str(values.stage), pin_versions: values['pin-versions'] ? true : undefined }),
  required: () => [
    ['name', '--name'],
    ['intent', '--intent'],
    ['evaluator_ids', '--evaluator'],
  ],
  created: (judge) => `Created judge ${judge.name} (${judge.id}) with ${judge.evaluators.length} evaluator(s): ${judge.evaluators.map((e) => e.name).join(', ')}.`,
});

const update = updateCommand('judge', {
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
  body(values) {
    if (values.stage !== undefined && values['clear-stage']) throw usageError('give --stage or --clear-stage, not both.');
    if (values['pin-versions'] && values['unpin-versions']) throw usageError('give --pin-versions or --unpin-versions, not both.');
    return judgeBody(values, {
      stage: values['clear-stage'] ? null : str(values.stage),
      pin_versions: values['pin-versions'] ? true : values['unpin-versions'] ? false : undefined,
    });
  },
  nothingToChange: 'nothing to change: give at least one of --name, --intent, --evaluator, --stage, --visibility, --project, --file.',
});

const delete_ = deleteCommand('judge', 'delete a judge (its execution logs stay)');

const run = executeCommand('judge', {
  summary: 'score one request/response pair with a judge',
  help: `Usage: tribunal judges run <id or exact name> --response <text> [options]

${RUN_HELP}`,
  options: RUN_OPTIONS,
  body: runInputFromFlags,
});

const judgeCommands: Group = { list: list_, get, create, update, delete: delete_, run, generate: generateCommand, 'proxy-url': proxyUrlCommand, ...judgeFileCommands };

export function judges(argv: string[]): Promise<number> {
  return runGroup('judges', 'Judges are named sets of evaluators for one stage of an application.', judgeCommands, argv);
}
