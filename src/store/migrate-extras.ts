// The tables db.json gained after the first migration, copied and verified by `tribunal migrate`
// (migrate-json.ts runs this): attachments with their bytes, claim tokens, synthetic data, budget
// caps and counters, and provider batches. Everything goes through the Store contract on both sides.
//
// - Safe to re-run: a record already in PostgreSQL is kept, never overwritten; when it differs from
//   the JSON one, that is a mismatch (the verification lists it).
// - Budget counters move with what they spent. Their reservations are estimates of runs in flight
//   in the JSON server, which the JSON store itself lets go at start-up: none is carried over.
import type { FileRecord } from './file-types.ts';
import type { JsonData } from './json-data.ts';
import type { MigrateContext } from './migrate-context.ts';
import type { BudgetCap, BudgetCounter } from './budget-types.ts';
import type { ProviderBatchRecord } from './provider-batch-types.ts';
import type { ClaimTokenRecord, SyntheticDataRecord } from './surface-types.ts';

const values = <T>(table: Record<string, T> | undefined): T[] => Object.values(table ?? {});
const byKey = <T>(records: T[], key: (r: T) => string) => new Map(records.map((r) => [key(r), r]));
const capKey = (c: Pick<BudgetCap, 'org_id' | 'scope' | 'scope_id'>) => JSON.stringify([c.org_id, c.scope, c.scope_id]);
const counterKey = (c: Pick<BudgetCounter, 'org_id' | 'scope' | 'scope_id' | 'period'>) => JSON.stringify([c.org_id, c.scope, c.scope_id, c.period]);

async function migrateFiles(ctx: MigrateContext, files: FileRecord[]): Promise<void> {
  const { source, target: t, counts } = ctx;
  counts.files.source = files.length;
  for (const f of files) {
    const data = await source.files.read(f.org_id, f.id);
    if (!data) {
      ctx.mismatches.push(`files: ${f.org_id}/${f.id} not copied: its bytes are missing from the JSON data directory (files/${f.org_id}/${f.id})`);
      continue;
    }
    const { record, created } = await t.files.put(f, data);
    if (created) counts.files.copied++;
    else if (!ctx.equal(record, f)) ctx.mismatches.push(`files: ${f.org_id}/${f.id} not copied: another file with this id is in PostgreSQL`);
  }
  for (const f of files) {
    const want = await source.files.read(f.org_id, f.id);
    if (!want) continue; // told above
    const [stored, got] = await Promise.all([t.files.get(f.org_id, f.id), t.files.read(f.org_id, f.id)]);
    // The record, then the bytes themselves, compared byte for byte.
    if (stored && !got?.equals(want)) ctx.mismatches.push(`files: ${f.org_id}/${f.id} has other bytes in PostgreSQL`);
    else ctx.compare('files', `${f.org_id}/${f.id}`, f, stored);
  }
}

async function migrateSurface(ctx: MigrateContext, tokens: ClaimTokenRecord[], synthetic: SyntheticDataRecord[]): Promise<void> {
  const { target: t, counts } = ctx;
  counts.claim_tokens.source = tokens.length;
  for (const tok of tokens) {
    // Copied by an earlier run (or used since on PostgreSQL): kept, verification tells any difference.
    if (await t.getClaimToken(tok.token_hash)) continue;
    await t.createClaimToken(tok);
    counts.claim_tokens.copied++;
  }
  counts.synthetic_data.source = synthetic.length;
  for (const s of synthetic) {
    // putSyntheticData replaces: never over a record already there (a later generation on PostgreSQL).
    if (await t.getSyntheticData(s.judge_id)) continue;
    await t.putSyntheticData(s);
    counts.synthetic_data.copied++;
  }
  for (const tok of tokens) ctx.compare('claim_tokens', `token of judge ${tok.judge_id}`, tok, await t.getClaimToken(tok.token_hash));
  for (const s of synthetic) ctx.compare('synthetic_data', `judge ${s.judge_id}`, s, await t.getSyntheticData(s.judge_id));
}

async function migrateBudgets(ctx: MigrateContext, orgIds: string[], caps: BudgetCap[], counters: BudgetCounter[]): Promise<void> {
  const { target: t, counts } = ctx;
  const storedCaps = async () => byKey((await Promise.all(orgIds.map((o) => t.listBudgetCaps(o)))).flat(), capKey);
  const storedCounters = async () => byKey(await t.listBudgetCounters({}), counterKey);
  counts.budget_caps.source = caps.length;
  counts.budget_counters.source = counters.length;
  const capsBefore = await storedCaps();
  for (const c of caps) {
    if (capsBefore.has(capKey(c))) continue; // set by an earlier run or on PostgreSQL: verification compares
    await t.setBudgetCap(c);
    counts.budget_caps.copied++;
  }
  const countersBefore = await storedCounters();
  for (const c of counters) {
    // settleBudget adds: only a counter PostgreSQL does not hold yet, so a second run adds nothing.
    if (countersBefore.has(counterKey(c))) continue;
    await t.settleBudget(c, 0, c.spent_usd);
    counts.budget_counters.copied++;
  }
  const capsAfter = await storedCaps();
  for (const c of caps) ctx.compare('budget_caps', capKey(c), c, capsAfter.get(capKey(c)));
  const countersAfter = await storedCounters();
  for (const c of counters) ctx.compare('budget_counters', counterKey(c), { ...c, reserved_usd: 0 }, countersAfter.get(counterKey(c)));
  const reserved = counters.filter((c) => c.reserved_usd > 0).length;
  if (reserved) ctx.notCopied.push(`budget_counters: the reservations of ${reserved} counters (runs in flight in the JSON server; it lets them go at start-up too)`);
}

async function migrateProviderBatches(ctx: MigrateContext, batches: ProviderBatchRecord[]): Promise<void> {
  const { target: t, counts } = ctx;
  counts.provider_batches.source = batches.length;
  const stored = async (runs: string[]) => byKey((await Promise.all(runs.map((b) => t.listProviderBatches(b)))).flat(), (r) => r.id);
  const runs = [...new Set(batches.map((b) => b.batch_id))];
  const before = await stored(runs);
  for (const b of batches) {
    if (before.has(b.id)) continue;
    // Kept as it is: a run still waiting on its provider polls the same provider batch on PostgreSQL.
    await t.createProviderBatch(b);
    counts.provider_batches.copied++;
  }
  const after = await stored(runs);
  for (const b of batches) ctx.compare('provider_batches', b.id, b, after.get(b.id));
}

export async function migrateExtras(ctx: MigrateContext, db: Partial<JsonData>, orgIds: string[]): Promise<void> {
  const oldestFirst = <T extends { created_at: string }>(a: T, b: T) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0);
  await migrateFiles(ctx, values(db.files).sort(oldestFirst));
  await migrateSurface(ctx, values(db.claim_tokens).sort(oldestFirst), values(db.synthetic_data).sort(oldestFirst));
  await migrateBudgets(ctx, orgIds, values(db.budget_caps), values(db.budget_counters));
  await migrateProviderBatches(ctx, values(db.provider_batches).sort(oldestFirst));
  const c = ctx.counts;
  ctx.log(
    `Copied ${c.files.copied} files, ${c.claim_tokens.copied} claim tokens, ${c.synthetic_data.copied} synthetic data sets, ${c.budget_caps.copied} budget caps, ${c.budget_counters.copied} budget counters, ${c.provider_batches.copied} provider batches.`,
  );
}
