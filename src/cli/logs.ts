// tribunal logs list|get|sessions|users: every filter of GET /v1/execution-logs/, one run in full
// (a conversation turn by turn), and the known session and user ids.
import { list, num, runGroup, str, type Command } from './command.ts';
import { resolveId } from './client.ts';
import { EXIT } from './errors.ts';
import { clip, day, printFields, printJson, printNextPage, printTable, score, usd } from './output.ts';
import type { Group } from './shared.ts';
import type { ExecutionLog, JurorResult } from '../schemas/core.ts'; // the wire type, from the zod schema (one source of truth)

type Log = ExecutionLog;

const list_: Command = {
  summary: 'list past runs, newest first, with every filter of the REST interface',
  help: `Usage: tribunal logs list [filters] [--limit N] [--cursor C | --all]

  --judge <id|name>       only runs of this judge
  --evaluator <id|name>   only runs in which this evaluator scored (alone or in a judge)
  --project <id>          only runs filed under this project
  --min-score <0..1>      mean score at least
  --max-score <0..1>      mean score at most
  --min-cost <usd>        cost at least
  --max-cost <usd>        cost at most
  --tag <tag>             carrying this tag (repeat: all must match; or comma-separated)
  --session <id>          runs of this session (session_id)
  --batch <id>            rows of this batch run (batch_execution_id)
  --user <id>             runs for this end user (user_id)
  --trace <id>            runs that judged a span of this OpenTelemetry trace (trace_id)
  --span <id>             runs that judged this span (span_id)
  --from <date>           at or after this date (2026-11-21) or ISO-8601 date-time
  --to <date>             at or before this date (whole day) or ISO-8601 date-time
  --limit <n>             page size (default 50, at most 200)
  --cursor <c>            the next page
  --all                   every page`,
  options: {
    judge: { type: 'string' },
    evaluator: { type: 'string' },
    project: { type: 'string' },
    'min-score': { type: 'string' },
    'max-score': { type: 'string' },
    'min-cost': { type: 'string' },
    'max-cost': { type: 'string' },
    tag: { type: 'string', multiple: true },
    session: { type: 'string' },
    batch: { type: 'string' },
    user: { type: 'string' },
    trace: { type: 'string' },
    span: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean' },
  },
  async run({ values, json, client }) {
    const judge = str(values.judge);
    const evaluator = str(values.evaluator);
    const query = {
      judge_id: judge ? await resolveId(client(), 'judge', judge) : undefined,
      evaluator_id: evaluator ? await resolveId(client(), 'evaluator', evaluator) : undefined,
      project_id: str(values.project),
      min_score: num(values['min-score'], 'min-score', { min: 0, max: 1 }),
      max_score: num(values['max-score'], 'max-score', { min: 0, max: 1 }),
      min_cost: num(values['min-cost'], 'min-cost', { min: 0 }),
      max_cost: num(values['max-cost'], 'max-cost', { min: 0 }),
      tags: list(values.tag)
        ?.flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean),
      session_id: str(values.session),
      batch_execution_id: str(values.batch),
      user_id: str(values.user),
      trace_id: str(values.trace),
      span_id: str(values.span),
      date_from: str(values.from),
      date_to: str(values.to),
    };
    const page = values.all
      ? { results: await client().listAll<Log>('/v1/execution-logs/', query), next_cursor: null }
      : await client().get('/v1/execution-logs/', { ...query, limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      printTable(
        ['ID', 'CREATED', 'RUN OF', 'SCORE', 'COST', 'TAGS', 'RESPONSE'],
        page.results.map((l: Log) => [
          l.id,
          day(l.created_at),
          clip(l.judge_id ? l.judge_name : l.evaluator_name, 28),
          l.comparison ? l.comparison.preference : score(l.score),
          usd(l.cost_usd),
          clip(l.tags.join(','), 20),
          clip(l.response, 40),
        ]),
      );
      printNextPage(page.next_cursor, 'tribunal logs list');
    }
    return EXIT.ok;
  },
};

const get: Command = {
  summary: 'show one run in full, with every score and justification',
  help: 'Usage: tribunal logs get <log id>',
  positionals: [1, 1],
  async run({ positionals, json, client }) {
    const l = await client().get<Log>(`/v1/execution-logs/${encodeURIComponent(positionals[0])}/`);
    if (json) {
      printJson(l);
      return EXIT.ok;
    }
    printFields([
      ['id', l.id],
      ['created', day(l.created_at)],
      [
        l.comparison ? 'comparison with' : 'run of',
        l.judge_id ? `judge ${l.judge_name} (${l.judge_id}) v${l.judge_version}` : `evaluator ${l.evaluator_name} (${l.evaluator_id}) v${l.evaluator_version}`,
      ],
      ['project', l.project_id],
      l.comparison ? ['preference', `${l.comparison.preference} (a ${l.comparison.wins_a}, b ${l.comparison.wins_b}, ties ${l.comparison.ties})`] : ['score', score(l.score)],
      ['cost', usd(l.cost_usd)],
      ['latency', `${Math.round(l.latency_ms)} ms`],
      ['user', l.user_id],
      ['session', l.session_id ?? null],
      ['trace', l.trace_id ? `${l.trace_id}${l.span_id ? ` span ${l.span_id}` : ''}` : null],
      ['tags', l.tags.length ? l.tags : null],
      ['system prompt', l.system_prompt ?? null],
      ['conversation', l.turns?.length ? l.turns.map(turnText).join('\n') : null],
      ['request', l.turns?.length ? null : l.request],
      [l.comparison ? 'response a' : 'response', l.response],
      ['response b', l.comparison?.response_b ?? null],
      ['contexts', l.contexts?.length ? l.contexts.map((c, i) => `[${i + 1}] ${c}`).join('\n') : null],
      ['expected', l.expected_output],
    ]);
    console.log('\nResults:');
    for (const r of l.evaluator_results) {
      const c = l.comparison?.evaluators.find((e) => e.evaluator_id === r.evaluator_id);
      const verdict = c ? `${c.preference ?? 'failed'}${c.preference !== null && !c.consistent ? ' (orders disagreed)' : ''}` : score(r.score).padStart(4);
      console.log(`  ${verdict}  ${r.evaluator_name} v${r.evaluator_version}  (${r.model ?? 'no model'}, ${usd(r.cost_usd)}, ${Math.round(r.latency_ms)} ms)`);
      const failed = c ? r.error !== undefined : r.score === null;
      const why = failed ? `failed: ${r.error ?? 'no score'}` : (r.justification ?? '');
      for (const line of why.split('\n')) console.log(`        ${line}`);
      if (r.jurors?.length) printJurors(r.jurors, r.spread ?? null);
    }
    return EXIT.ok;
  },
};

type Juror = Pick<JurorResult, 'model' | 'score' | 'not_applicable' | 'cost_usd' | 'latency_ms' | 'error'>;

/** A jury's jurors under its result: each one's score (or why it has none), cost and latency, and the spread. */
function printJurors(jurors: Juror[], spread: number | null): void {
  console.log(`        jurors (spread ${spread === null ? '-' : spread.toFixed(2)}):`);
  for (const j of jurors) {
    const verdict = j.error !== undefined ? `failed: ${j.error}` : j.not_applicable ? 'not applicable' : score(j.score);
    console.log(`          ${j.model}: ${verdict}  (${usd(j.cost_usd)}, ${Math.round(j.latency_ms)} ms)`);
  }
}

/** One turn on a line or a few: `[3 tool get_weather]` then the content; tool calls as name(arguments). */
function turnText(t: NonNullable<Log['turns']>[number], i: number): string {
  const head = `[${i + 1} ${t.role}${t.name ? ` ${t.name}` : ''}]`;
  const calls = (t.tool_calls ?? []).map((c) => `  -> ${c.name}(${typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments)})`);
  return [t.content ? `${head} ${t.content}` : head, ...calls].join('\n');
}

/** tribunal logs sessions|users: GET /v1/execution-logs/session-ids/ or /user-ids/. */
function valuesCommand(path: string, what: string): Command {
  return {
    summary: `list the known ${what}s of your execution logs, ascending`,
    help: `Usage: tribunal logs ${what === 'session id' ? 'sessions' : 'users'} [--starts-with P] [--limit N] [--cursor C | --all]`,
    options: { 'starts-with': { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
    async run({ values, json, client }) {
      const query = { starts_with: str(values['starts-with']) };
      const page = values.all
        ? { results: await client().listAll<string>(path, query), next_cursor: null }
        : await client().get<{ results: string[]; next_cursor: string | null }>(path, {
            ...query,
            limit: num(values.limit, 'limit', { min: 1, integer: true }),
            cursor: str(values.cursor),
          });
      if (json) printJson(page);
      else {
        for (const v of page.results) console.log(v);
        printNextPage(page.next_cursor, `tribunal logs ${what === 'session id' ? 'sessions' : 'users'}`);
      }
      return EXIT.ok;
    },
  };
}

const logCommands: Group = {
  list: list_,
  get,
  sessions: valuesCommand('/v1/execution-logs/session-ids/', 'session id'),
  users: valuesCommand('/v1/execution-logs/user-ids/', 'user id'),
};

export function logs(argv: string[]): Promise<number> {
  return runGroup('logs', 'Execution logs record every run: inputs, each evaluator score and justification, cost and latency.', logCommands, argv);
}
