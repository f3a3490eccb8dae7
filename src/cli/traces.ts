// tribunal traces list|get and tribunal rules list|get|create|update|delete|test|backfill|status:
// received traces and evaluation rules (REST, docs/TRACES.md).
import { num, oneOf, runGroup, str, type Command } from './command.ts';
import { EXIT, usageError } from './errors.ts';
import { clip, printFields, printJson, printNextPage, printTable } from './output.ts';
import { defined, oneRequestCommand, readJsonObject, type Group } from './shared.ts';

const tracesList: Command = {
  summary: 'list received traces, newest first',
  help: `Usage: tribunal traces list [--service S] [--span-name N] [--attribute key[=value]] [--since ISO] [--until ISO] [--evaluated true|false] [--limit N] [--cursor C]`,
  options: {
    service: { type: 'string' },
    'span-name': { type: 'string' },
    attribute: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    evaluated: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
  async run({ values, json, client }) {
    const evaluated = oneOf(values.evaluated, 'evaluated', ['true', 'false'] as const);
    const page = await client().get('/v1/traces/', {
      service: str(values.service),
      span_name: str(values['span-name']),
      attribute: str(values.attribute),
      date_from: str(values.since),
      date_to: str(values.until),
      has_evaluation: evaluated,
      limit: num(values.limit, 'limit', { min: 1, integer: true }),
      cursor: str(values.cursor),
    });
    if (json) printJson(page);
    else {
      printTable(
        ['TRACE', 'ROOT SPAN', 'SERVICE', 'SPANS', 'ERRORS', 'EVALS', 'STARTED'],
        page.results.map((t: any) => [
          t.trace_id,
          clip(t.root_span_name ?? '(not received)', 30),
          clip(t.service_name ?? '', 20),
          String(t.span_count),
          String(t.error_count),
          String(t.evaluation_count),
          t.start_time,
        ]),
      );
      printNextPage(page.next_cursor, 'tribunal traces list');
    }
    return EXIT.ok;
  },
};

const tracesGet = oneRequestCommand(
  'one trace: its span tree, what would be judged, and the scores',
  `Usage: tribunal traces get <trace id>`,
  (api, id) => api.get(`/v1/traces/${encodeURIComponent(id)}/`),
  (t) => {
    for (const s of t.spans) {
      const scores = s.evaluations.map((e: any) => `${e.name}=${e.score ?? 'n/a'}`).join(' ');
      const what = s.extracted ? ` [${s.extracted.source}] ${clip(JSON.stringify(s.extracted.response), 50)}` : '';
      console.log(`${'  '.repeat(s.depth)}${s.name} (${s.kind}, ${s.status.code})${what}${scores ? `  scores: ${scores}` : ''}`);
    }
  },
);

const rulePath = (id: string) => `/v1/evaluation-rules/${encodeURIComponent(id)}/`;
const statusLine = (s: any) =>
  `matched ${s.matched}, sampled ${s.sampled}, queued ${s.queued}, running ${s.running}, done ${s.done}, failed ${s.failed}, skipped ${
    Object.entries(s.skipped)
      .map(([k, n]) => `${k}=${n}`)
      .join(' ') || '0'
  }${s.oldest_queued_age_s !== null ? `, oldest waiting ${s.oldest_queued_age_s}s` : ''}${s.backlog ? ' (BACKLOG: the queue is not keeping up)' : ''}`;

const RULE_OPTIONS = {
  judge: { type: 'string' },
  evaluator: { type: 'string' },
  scope: { type: 'string' },
  filter: { type: 'string', multiple: true },
  'sampling-rate': { type: 'string' },
  'delay-seconds': { type: 'string' },
  'max-runs-per-day': { type: 'string' },
  inactive: { type: 'boolean' },
  file: { type: 'string' },
} as const;
const RULE_HELP = `  --judge <id> | --evaluator <id>   what judges the spans
  --scope span|trace|session        default span
  --filter field:op:value           repeatable, all must hold, e.g. gen_ai.operation.name:eq:chat (op: eq ne in contains exists gt lt)
  --sampling-rate <0..1>            share of traces judged, by trace id (default 1)
  --delay-seconds <n>               quiet period before a trace or session is judged
  --max-runs-per-day <n>            daily budget
  --inactive                        create it switched off
  --file <rule.json>                any other fields (extractor, budget, queue_limit, shed_policy) as JSON`;

function ruleBody(values: Record<string, unknown>): Record<string, unknown> {
  const filter = (values.filter as string[] | undefined)?.map((f) => {
    const [field, op, ...rest] = f.split(':');
    if (!field || !op) throw usageError(`--filter ${JSON.stringify(f)}: write field:op:value, e.g. span.name:eq:chat`);
    const raw = rest.join(':');
    const value = op === 'in' ? raw.split(',') : op === 'gt' || op === 'lt' ? Number(raw) : raw;
    return op === 'exists' ? { field, op } : { field, op, value };
  });
  const runs = num(values['max-runs-per-day'] as string | undefined, 'max-runs-per-day', { min: 0, integer: true });
  return defined({
    ...(values.file ? readJsonObject(values.file as string) : {}),
    judge_id: str(values.judge as string | undefined),
    evaluator_id: str(values.evaluator as string | undefined),
    scope: oneOf(values.scope as string | undefined, 'scope', ['span', 'trace', 'session'] as const),
    filter,
    sampling_rate: num(values['sampling-rate'] as string | undefined, 'sampling-rate', { min: 0, max: 1 }),
    delay_seconds: num(values['delay-seconds'] as string | undefined, 'delay-seconds', { min: 0, integer: true }),
    budget: runs !== undefined ? { max_runs_per_day: runs } : undefined,
    active: values.inactive ? false : undefined,
  });
}

const rulesList: Command = {
  summary: 'list evaluation rules with their status',
  help: `Usage: tribunal rules list`,
  async run({ json, client }) {
    const page = await client().get('/v1/evaluation-rules/');
    if (json) printJson(page);
    else
      printTable(
        ['ID', 'NAME', 'SCOPE', 'RATE', 'ACTIVE', 'STATUS'],
        page.results.map((r: any) => [r.id, clip(r.name, 30), r.scope, String(r.sampling_rate), r.active ? 'yes' : 'no', statusLine(r.status)]),
      );
    return EXIT.ok;
  },
};

const showRule = (r: any, json: boolean) => {
  if (json) return printJson(r);
  printFields([
    ['rule', `${r.name} (${r.id})`],
    ['judges with', r.judge_id ? `judge ${r.judge_id}` : `evaluator ${r.evaluator_id}`],
    ['scope', r.scope],
    ['sampling rate', String(r.sampling_rate)],
    ['active', r.active ? 'yes' : 'no'],
    ['status', statusLine(r.status)],
  ]);
};

const rulesGet: Command = {
  summary: 'one rule and its status',
  help: 'Usage: tribunal rules get <id>',
  positionals: [1, 1],
  async run({ positionals, json, client }) {
    showRule(await client().get(rulePath(positionals[0])), json);
    return EXIT.ok;
  },
};
const rulesStatus: Command = {
  summary: "a rule's status counters (exit 1 when its queue is not keeping up)",
  help: 'Usage: tribunal rules status <id>',
  positionals: [1, 1],
  async run({ positionals, json, client }) {
    const r = await client().get(rulePath(positionals[0]));
    if (json) printJson(r.status);
    else console.log(statusLine(r.status));
    return r.status.backlog ? EXIT.gate : EXIT.ok;
  },
};
const rulesCreate: Command = {
  summary: 'create an evaluation rule',
  help: `Usage: tribunal rules create <name> (--judge <id> | --evaluator <id>) [options]\n\n${RULE_HELP}`,
  options: RULE_OPTIONS,
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    showRule(await client().post('/v1/evaluation-rules/', { name: positionals[0], ...ruleBody(values) }), json);
    return EXIT.ok;
  },
};
const rulesUpdate: Command = {
  summary: 'change a rule',
  help: `Usage: tribunal rules update <id> [options] [--active]\n\n${RULE_HELP}\n  --active                          switch it on`,
  options: { ...RULE_OPTIONS, active: { type: 'boolean' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const body = ruleBody(values);
    if (values.active) body.active = true;
    showRule(await client().patch(rulePath(positionals[0]), body), json);
    return EXIT.ok;
  },
};
const rulesDelete = oneRequestCommand(
  'delete a rule (its results stay)',
  'Usage: tribunal rules delete <id>',
  (api, id) => api.delete(rulePath(id)),
  (_answer, id) => console.log(`Deleted rule ${id}.`),
);
const rulesTest: Command = {
  summary: 'show what the rule would judge on the latest matching stored spans (no model call)',
  help: 'Usage: tribunal rules test <id> [--limit N]',
  options: { limit: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const r = await client().post(`${rulePath(positionals[0])}test/`, defined({ limit: num(values.limit, 'limit', { min: 1, max: 50, integer: true }) }));
    if (json) printJson(r);
    else {
      console.log(`${r.matched_spans} matching span(s) stored.`);
      for (const x of r.results)
        console.log(
          `${x.trace_id}/${x.span_id} ${x.span_name}${x.sampled ? '' : ' (not sampled)'}: ${x.would_judge ? clip(JSON.stringify(x.would_judge), 160) : `nothing to judge (${x.reason})`}`,
        );
    }
    return EXIT.ok;
  },
};
const rulesBackfill: Command = {
  summary: 'judge the stored spans of a period as a batch run',
  help: 'Usage: tribunal rules backfill <id> --since <ISO> [--until <ISO>]',
  options: { since: { type: 'string' }, until: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    if (!str(values.since)) throw usageError('--since is required (an ISO-8601 instant).');
    const r = await client().post(`${rulePath(positionals[0])}backfill/`, { date_from: str(values.since), date_to: str(values.until) ?? new Date().toISOString() });
    if (json) printJson(r);
    else console.log(`Batch run ${r.batch_execution_id}: ${r.items} item(s) of ${r.matched} matching span(s). Follow it with: tribunal batch status ${r.batch_execution_id}`);
    return EXIT.ok;
  },
};

const traceCommands: Group = { list: tracesList, get: tracesGet };
const ruleCommands: Group = {
  list: rulesList,
  get: rulesGet,
  status: rulesStatus,
  create: rulesCreate,
  update: rulesUpdate,
  delete: rulesDelete,
  test: rulesTest,
  backfill: rulesBackfill,
};

export function traces(argv: string[]): Promise<number> {
  return runGroup('traces', 'Traces received on /otel/v1/traces (docs/TRACES.md).', traceCommands, argv);
}
export function rules(argv: string[]): Promise<number> {
  return runGroup('rules', 'Evaluation rules: judge received spans online (docs/TRACES.md).', ruleCommands, argv);
}
