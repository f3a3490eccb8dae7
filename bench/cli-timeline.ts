// BENCH_TIMELINE=1 of bench/cli-eval.bench.ts (issue 33): the events cli-timeline-preload.mjs
// recorded in the CLI, the Tribunal server and the fake judge model, lined up row by row into the
// stages of a round trip, so that the time a row takes beyond the model's latency can be placed:
//
//   CLI send -> server in -> model requests out -> (fake: in, latency timer, out) -> model answers in
//   -> server out (res.end: the answer, after the durable log) -> 'finish' -> CLI recv -> next send
//
// A row's server request is the one on the CLI's connection (its local port) between its send and
// its answer; the model calls carry the row's "(case N)" text. Only the measured CLI run's window
// counts (the warm-up and the bare reference are left out).
import fs from 'node:fs';
import path from 'node:path';

type Events = Map<string, Array<[time: number, key: number]>>;

function load(dir: string): Array<{ role: string; file: string; events: Events }> {
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => {
      const { role, events: flat } = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { role: string; events: Array<number | string> };
      const events: Events = new Map();
      for (let i = 0; i < flat.length; i += 3) {
        const kind = flat[i + 1] as string;
        if (!events.has(kind)) events.set(kind, []);
        events.get(kind)!.push([flat[i] as number, flat[i + 2] as number]);
      }
      return { role, file, events };
    });
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);

/** mean, median and tail of a list of milliseconds. */
function spread(values: number[]): string {
  if (!values.length) return 'n=0';
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(2);
  return `mean ${mean(s).toFixed(2).padStart(6)}  p50 ${at(0.5).padStart(6)}  p90 ${at(0.9).padStart(6)}  p99 ${at(0.99).padStart(6)}  max ${s[s.length - 1]!.toFixed(2).padStart(6)}  (n=${s.length})`;
}

/** The timeline of the CLI run of process `cliPid` at `concurrency`, as printable lines. */
export function timeline(dir: string, cliPid: number, latencyMs: number, concurrency: number): string[] {
  const all = load(dir);
  const cli = all.find((p) => p.role === 'cli' && p.file === `cli-${cliPid}.json`);
  const server = all.find((p) => p.role === 'tribunal');
  const fake = all.find((p) => p.role === 'fake');
  if (!cli || !server || !fake) return [`timeline: missing events (cli ${Boolean(cli)}, server ${Boolean(server)}, fake ${Boolean(fake)})`];
  const get = (p: { events: Events }, kind: string) => p.events.get(kind) ?? [];

  // The CLI's rows: send, answer and the connection's port, by case.
  const rows = new Map<number, { send: number; recv?: number; port?: number }>();
  for (const [t, c] of get(cli, 'send')) rows.set(c, { send: t });
  const recvs = get(cli, 'recv');
  const ports = get(cli, 'port');
  recvs.forEach(([t, c], i) => Object.assign(rows.get(c) ?? {}, { recv: t, port: ports[i]?.[1] }));
  const done = [...rows.values()].filter((r) => r.recv !== undefined);
  const from = Math.min(...done.map((r) => r.send));
  const to = Math.max(...done.map((r) => r.recv!));
  const inRun = (list: Array<[number, number]>) => list.filter(([t]) => t >= from - 1 && t <= to + 1);

  // The server's execute requests, by the client's port, in order (one at a time on a connection).
  const byPort = new Map<number, Array<{ in: number; out?: number; finish?: number }>>();
  for (const [t, port] of inRun(get(server, 'in'))) {
    if (!byPort.has(port)) byPort.set(port, []);
    byPort.get(port)!.push({ in: t });
  }
  for (const kind of ['out', 'finish'] as const) {
    const next = new Map<number, number>();
    for (const [t, port] of inRun(get(server, kind))) {
      const list = byPort.get(port);
      const i = next.get(port) ?? 0;
      if (list?.[i]) list[i]![kind] = t;
      next.set(port, i + 1);
    }
  }
  const modelOut = new Map<number, number[]>();
  const modelIn = new Map<number, number[]>();
  for (const [map, kind] of [
    [modelOut, 'mout'],
    [modelIn, 'min'],
  ] as const) {
    for (const [t, c] of inRun(get(server, kind))) {
      if (!map.has(c)) map.set(c, []);
      map.get(c)!.push(t);
    }
  }

  // A row's round: its place among the rows in the order they left, `concurrency` rows a round. The
  // first rounds leave together (every worker starts at once) and queue behind one another.
  const EARLY = 8;
  // And the rows from round LATE + 1 on, once the opening bursts have spread: the steady round trip.
  const LATE = 16;
  const roundOf = new Map<number, number>();
  [...rows.entries()].sort((a, b) => a[1].send - b[1].send).forEach(([c], i) => roundOf.set(c, Math.floor(i / concurrency)));
  const stages: Record<string, number[]> = {
    'CLI send -> server in': [],
    'server in -> first model request out': [],
    'model calls, first out -> last in, beyond latency': [],
    'last model answer in -> server res.end()': [],
    'res.end() -> finish': [],
    'finish -> CLI has the answer': [],
    'CLI answer -> next send on that connection': [],
    'round trip beyond latency (CLI send -> answer)': [],
  };
  const sendsByPort = new Map<number, number[]>();
  for (const r of done) {
    if (!sendsByPort.has(r.port!)) sendsByPort.set(r.port!, []);
    sendsByPort.get(r.port!)!.push(r.send);
  }
  const early = new Map<string, number[]>();
  const late = new Map<string, number[]>();
  /** Each stage's values by round, for the opening rounds' table below. */
  const byRound = new Map<string, number[][]>();
  const add = (name: string, c: number, value: number) => {
    stages[name]!.push(value);
    const round = roundOf.get(c)!;
    if (!byRound.has(name)) byRound.set(name, []);
    (byRound.get(name)![round] ??= []).push(value);
    const part = round < EARLY ? early : round >= LATE ? late : undefined;
    if (!part) return;
    if (!part.has(name)) part.set(name, []);
    part.get(name)!.push(value);
  };
  /** Each row's last model answer and its server res.end(), for the log commit's share below. */
  const commits: Array<{ c: number; answer: number; out: number }> = [];
  for (const [c, r] of rows) {
    if (r.recv === undefined) continue;
    add('round trip beyond latency (CLI send -> answer)', c, r.recv - r.send - latencyMs);
    const nextSend = sendsByPort.get(r.port!)?.find((t) => t >= r.recv!);
    if (nextSend !== undefined) add('CLI answer -> next send on that connection', c, nextSend - r.recv);
    const s = byPort.get(r.port!)?.find((q) => q.in >= r.send - 1 && q.in <= r.recv!);
    const outs = modelOut.get(c);
    const ins = modelIn.get(c);
    if (!s || !outs || !ins || s.out === undefined || s.finish === undefined) continue;
    add('CLI send -> server in', c, s.in - r.send);
    add('server in -> first model request out', c, Math.min(...outs) - s.in);
    add('model calls, first out -> last in, beyond latency', c, Math.max(...ins) - Math.min(...outs) - latencyMs);
    add('last model answer in -> server res.end()', c, s.out - Math.max(...ins));
    commits.push({ c, answer: Math.max(...ins), out: s.out });
    add('res.end() -> finish', c, s.finish - s.out);
    add('finish -> CLI has the answer', c, r.recv - s.finish);
  }

  // Inside the model call: the fake's own time beyond its latency, and how late its timers fired.
  const fakeIn = inRun(get(fake, 'in'));
  const fakeOut = new Map<number, number[]>();
  for (const [t, port] of inRun(get(fake, 'out'))) {
    if (!fakeOut.has(port)) fakeOut.set(port, []);
    fakeOut.get(port)!.push(t);
  }
  const fakeBeyond: number[] = [];
  for (const [t, port] of fakeIn) {
    const out = fakeOut.get(port)?.find((o) => o >= t + latencyMs - 1);
    if (out !== undefined) fakeBeyond.push(out - t - latencyMs);
  }
  const syncs = inRun(get(server, 'sync'));
  const synced = inRun(get(server, 'synced'));
  const syncMs = syncs.map(([t], i) => (synced[i]?.[0] ?? t) - t);
  // The execution log's group commit: a row whose last answer comes while a sync is in flight has its
  // line written only once that sync ends, then waits for a whole sync of its own.
  const during: number[] = [];
  const idle: number[] = [];
  for (const { answer, out } of commits) {
    const busy = syncs.some(([t], i) => t <= answer && (synced[i]?.[0] ?? t) > answer);
    (busy ? during : idle).push(out - answer);
  }

  // Finer, with the line's build time (the preload's 'line'): answer -> line built -> its sync starts
  // (the first after it) -> that sync ends -> res.end().
  const lineAt = new Map<number, number>();
  for (const [t, c] of inRun(get(server, 'line'))) lineAt.set(c, t);
  const parts = { 'answer -> line built': [] as number[], 'line -> its sync starts': [] as number[], 'its sync': [] as number[], 'sync ends -> res.end()': [] as number[] };
  for (const { c, answer, out } of commits) {
    const line = lineAt.get(c);
    if (line === undefined) continue;
    const i = syncs.findIndex(([t]) => t >= line);
    if (i < 0 || synced[i] === undefined) continue;
    parts['answer -> line built'].push(line - answer);
    parts['line -> its sync starts'].push(syncs[i]![0] - line);
    parts['its sync'].push(synced[i]![0] - syncs[i]![0]);
    parts['sync ends -> res.end()'].push(out - synced[i]![0]);
  }

  // Rows in the order they left, a round being `concurrency` of them: how the overhead settles.
  const ordered = done.sort((a, b) => a.send - b.send);
  const rounds: string[] = [];
  for (let i = 0; i < ordered.length; i += concurrency) {
    const round = ordered.slice(i, i + concurrency);
    rounds.push((round.reduce((sum, r) => sum + r.recv! - r.send - latencyMs, 0) / round.length).toFixed(1));
  }
  // The connections that end last: the batch ends with the last of them, so their opening rounds
  // count and not the mean (1,000 rows at 32: the 8 that carry 32 rows, the others 31).
  const chains = [...sendsByPort.keys()].map((port) => {
    const mine = done.filter((r) => r.port === port).sort((a, b) => a.send - b.send);
    return {
      rows: mine.length,
      first: mine[0]!.send - from,
      round1: mine[0]!.recv! - mine[0]!.send - latencyMs,
      beyond: mine.reduce((sum, r) => sum + r.recv! - r.send - latencyMs, 0),
      end: mine.at(-1)!.recv! - from,
    };
  });
  chains.sort((a, b) => b.end - a.end);
  const start = get(cli, 'start')[0]?.[0];
  const exit = get(cli, 'exit')[0]?.[0];

  const pad = 50;
  return [
    `timeline of the CLI run at concurrency ${concurrency} (ms; the recording itself adds a little):`,
    ...Object.entries(stages).map(
      ([name, values]) =>
        `  ${name.padEnd(pad)} ${spread(values)}  rounds 1-${EARLY}: mean ${early.has(name) ? mean(early.get(name)!).toFixed(2) : '-'}; ${LATE + 1}+: ${late.has(name) ? mean(late.get(name)!).toFixed(2) : '-'}`,
    ),
    `  ${'  of last answer -> res.end(): a sync in flight'.padEnd(pad)} ${spread(during)}`,
    `  ${'  no sync in flight'.padEnd(pad)} ${spread(idle)}`,
    `  ${'  of the model calls: the fake, in -> out, beyond'.padEnd(pad)} ${spread(fakeBeyond)}`,
    `  ${'  of which: its latency timer fired late by'.padEnd(pad)} ${spread(inRun(get(fake, 'late')).map(([, late]) => late))}`,
    `  ${'server fdatasync (group commits of the log)'.padEnd(pad)} ${spread(syncMs)}`,
    ...Object.entries(parts).map(([name, values]) => `  ${`  commit: ${name}`.padEnd(pad)} ${spread(values)}`),
    `  CLI process start -> first execute sent ${start === undefined ? '?' : (from - start).toFixed(1)}; batch (first send -> last answer) ${(to - from).toFixed(1)}; last answer -> process exit ${exit === undefined ? '?' : (exit - to).toFixed(1)}`,
    `  mean round trip beyond latency by round: ${rounds.join(' ')}`,
    `  the connections that end last (end, rows, first send, round 1 beyond latency, all rows beyond): ${chains
      .slice(0, 8)
      .map((c) => `${c.end.toFixed(0)}/${c.rows}/${c.first.toFixed(1)}/${c.round1.toFixed(1)}/${c.beyond.toFixed(0)}`)
      .join(' ')}`,
    `  each stage's mean by round, rounds 1-${LATE}, then ${LATE + 1}+:`,
    ...Object.keys(stages).map((name) => {
      const perRound = byRound.get(name) ?? [];
      const cells = Array.from({ length: LATE }, (_, r) => (perRound[r]?.length ? mean(perRound[r]!).toFixed(1) : '-').padStart(5));
      return `    ${name.padEnd(pad - 2)} ${cells.join('')}  | ${late.has(name) ? mean(late.get(name)!).toFixed(2) : '-'}`;
    }),
  ];
}
