// POST .../next/ on PostgreSQL (issue 31): the store's lease step with 100,000 queued items and 20
// reviewers asking at once. Each reviewer loops: next (timed) then submit, so the head of the queue
// always holds up to 20 live leases that next must walk past, and done items leave the open index.
// Goal: next <= 5 ms p95. Measured through PgReviewStore.next, the code the server runs (the HTTP
// and auth layers around it are the same for every route and not what this measures).
//
//   node --import tsx bench/review-next.bench.ts
//     BENCH_DATABASE_URL  default postgres://postgres@127.0.0.1:5432/postgres
//     BENCH_ITEMS         default 100000
//     BENCH_REVIEWERS     default 20
//     BENCH_NEXTS         default 2000 (next calls measured, over all reviewers)
//     BENCH_PER_ITEM      default 1 (annotators_per_item)
import pg from 'pg';
import { quantile, median } from './harness.ts';
import { reviewId } from '../src/review/ids.ts';
import { reviewStore } from '../src/review/store.ts';
import type { ReviewQueueRecord } from '../src/review/types.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ITEMS = Number(process.env.BENCH_ITEMS ?? 100_000);
const REVIEWERS = Number(process.env.BENCH_REVIEWERS ?? 20);
const NEXTS = Number(process.env.BENCH_NEXTS ?? 2000);
const PER_ITEM = Number(process.env.BENCH_PER_ITEM ?? 1);
const SCHEMA = `tribunal_bench_review_${process.pid}`;
const GOAL_MS = 5;

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: BASE_URL });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

async function main() {
  await admin(`CREATE SCHEMA ${SCHEMA}`);
  const u = new URL(BASE_URL);
  u.searchParams.set('options', `-c search_path=${SCHEMA}`);
  const store = new PostgresStore({ connectionString: u.toString(), poolMax: REVIEWERS + 2 });
  try {
    await store.init();
    const rs = reviewStore(store);
    const now = () => new Date().toISOString();
    const q: ReviewQueueRecord = {
      id: reviewId('rvq'),
      org_id: 'org_bench',
      name: 'bench',
      judge_id: null,
      evaluator_ids: ['evl_a'],
      annotators_per_item: PER_ITEM,
      lease_seconds: 600,
      sources: {},
      show_justification: false,
      created_at: now(),
      updated_at: now(),
    };
    await rs.createQueue(q);
    const t0 = Date.now();
    for (let i = 0; i < ITEMS; i += 5000) {
      const n = Math.min(5000, ITEMS - i);
      await rs.addItems(
        q.id,
        Array.from({ length: n }, (_, k) => ({
          id: reviewId('rvi'),
          queue_id: q.id,
          execution_log_id: `log_${i + k}`,
          source: 'manual',
          done: 0,
          adjudicated_at: null,
          created_at: now(),
        })),
      );
    }
    await store.sql('ANALYZE');
    console.log(`${ITEMS.toLocaleString()} items queued in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${REVIEWERS} reviewers, annotators_per_item ${PER_ITEM}.`);

    const times: number[] = [];
    const seen = new Map<string, Set<string>>();
    let left = NEXTS;
    await Promise.all(
      Array.from({ length: REVIEWERS }, async (_, r) => {
        const who = `key_${r}`;
        while (left-- > 0) {
          const t = performance.now();
          const got = await rs.next(q, who, now(), new Date(Date.now() + 600_000).toISOString());
          times.push(performance.now() - t);
          if (!got) return;
          const people = seen.get(got.item.id) ?? new Set();
          if (people.has(who)) throw new Error(`item ${got.item.id} leased twice to ${who}`);
          seen.set(got.item.id, people.add(who));
          const label = {
            id: reviewId('rvl'),
            queue_id: q.id,
            item_id: got.item.id,
            execution_log_id: got.item.execution_log_id,
            evaluator_id: 'evl_a',
            annotator_id: who,
            score: 0.5,
            note: null,
            created_at: now(),
          };
          const outcome = await rs.submit(q, got.item.id, who, [label], now());
          if (outcome !== 'ok') throw new Error(`submit: ${outcome}`);
        }
      }),
    );
    for (const [item, people] of seen) if (people.size > PER_ITEM) throw new Error(`item ${item} went to ${people.size} people`);
    times.sort((a, b) => a - b);
    const p95 = quantile(times, 0.95);
    console.log(
      `next: ${times.length} calls, median ${median(times).toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms (goal p95 <= ${GOAL_MS} ms: ${p95 <= GOAL_MS ? 'met' : 'NOT met'})`,
    );
    console.log(`each item to at most ${PER_ITEM} people, never twice to one: checked over ${seen.size} items.`);
  } finally {
    await store.close();
    await admin(`DROP SCHEMA ${SCHEMA} CASCADE`);
  }
}

await main();
