// The embedded default store: lowdb on JSON files in one data directory, for one machine.
//
// - db.json holds organizations, keys, projects, evaluators and judges (with every version). It is
//   small; lowdb rewrites it whole on each commit, through a durable adapter (temp file, fsync,
//   rename, fsync of the directory) so a crash leaves either the old or the new file.
// - logs.jsonl holds execution logs, one JSON line each, append-only: appending costs the same
//   with 100 or 100,000 logs already stored. A torn last line (crash mid-append) is dropped at load;
//   any other bad line is skipped and copied aside (json-files.ts), never cut off. Only a compact
//   index of the logs stays in memory (log-index.ts); a log's record is read from its line.
// - Every mutation is applied in memory synchronously (so checks and writes are serialized by the
//   event loop) and then committed; concurrent commits are grouped into one disk write.
// - tribunal.lock keeps a second process out (see lock.ts).
//
// The store is its parts (one per resource, json-*.ts, each over its table of db.json or its own
// files), assembled as the PostgreSQL store assembles its own (compose.ts): this file keeps only the
// data directory's lifecycle (lock, load, commits, close) and the composition.
import fs from 'node:fs';
import path from 'node:path';
import { Low } from 'lowdb';
import { composed } from './compose.ts';
import { jsonApiKeys } from './json-api-keys.ts';
import { BatchFiles } from './json-batches.ts';
import { jsonBatches } from './json-batch-store.ts';
import { jsonBudgets, type BudgetTables } from './json-budgets.ts';
import { jsonCalibration } from './json-calibration.ts';
import { emptyData, purgeOrganizationData, withoutPrototypes, type JsonData } from './json-data.ts';
import { DatasetFiles, jsonDatasets } from './json-datasets.ts';
import { dropFileBytes, jsonFiles } from './json-files-table.ts';
import { CARRY_MS } from './append-file.ts';
import { BusyHold } from './json-batch-rows.ts';
import { assertDbBesideLogs, DurableJsonFile, GroupCommit, removeStaleTempFiles } from './json-files.ts';
import { jsonLogs } from './json-logs.ts';
import { jsonModels } from './json-models.ts';
import { jsonOrganizations } from './json-organizations.ts';
import { jsonProjects } from './json-projects.ts';
import { jsonProviderBatches } from './json-provider-batches.ts';
import { jsonSurface } from './json-surface.ts';
import { jsonEvaluators, jsonJudges } from './json-versioned.ts';
import { DataDirLock, type LockOwner } from './lock.ts';
import { LogFile } from './log-file.ts';
import { jsonResultCache, ResultCacheLru } from './result-cache-lru.ts';
import type { Store } from './types.ts';

export interface JsonStoreOptions {
  dataDir: string;
  role?: LockOwner['role'];
  /** How long to wait for a CLI that briefly holds the directory. */
  lockWaitMs?: number;
  adminSocket?: string;
}

/** One data directory, held by this process: what the JSON store's parts read and commit through. */
class JsonDataDir {
  private db!: Low<JsonData>;
  private lock?: DataDirLock;
  private dbCommit!: GroupCommit;
  private logCommit!: GroupCommit;
  /** Batch runs' logs given and not yet on disk, and whether they are held (holdLogs). */
  private batchLogsWaiting = 0;
  private readonly logHold = new BusyHold();
  logs!: LogFile;
  closed = false;
  /** Rooms writing into the directory (review queues): closed before the lock goes. */
  readonly closers: Array<() => Promise<void>> = [];
  /** Datasets and batch runs live beside db.json, not in it (json-datasets.ts, json-batches.ts). */
  datasets!: DatasetFiles;
  batches!: BatchFiles;
  /** The result cache: in memory only (result-cache-lru.ts). */
  readonly resultCache = new ResultCacheLru();

  constructor(private readonly opts: JsonStoreOptions) {}

  get path() {
    return this.opts.dataDir;
  }
  get filesDir() {
    return path.join(this.opts.dataDir, 'files');
  }

  async init(): Promise<void> {
    const dir = this.opts.dataDir;
    fs.mkdirSync(dir, { recursive: true });
    this.lock = await DataDirLock.acquire(dir, this.opts.role ?? 'server', {
      waitMs: this.opts.lockWaitMs ?? 5000,
      adminSocket: this.opts.adminSocket,
    });
    try {
      removeStaleTempFiles(dir);
      assertDbBesideLogs(dir);
      this.db = new Low<JsonData>(new DurableJsonFile<JsonData>(path.join(dir, 'db.json')), emptyData());
      await this.db.read();
      if (!this.db.data) {
        // Written at once, so that a db.json missing beside logs.jsonl always means a lost database.
        this.db.data = emptyData();
        await this.db.write();
      }
      withoutPrototypes(this.db.data);
      this.dbCommit = new GroupCommit(() => this.db.write());
      this.logs = await LogFile.open(path.join(dir, 'logs.jsonl'));
      this.logCommit = new GroupCommit(() => this.logs.flush());
      this.datasets = new DatasetFiles(path.join(dir, 'datasets'));
      await this.datasets.load();
      this.batches = new BatchFiles(path.join(dir, 'batches'));
      await this.batches.load();
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Let writes already acknowledged-to-be be on disk before the files and the lock are let go.
    await Promise.allSettled([this.dbCommit?.commit(), this.logCommit?.commit(), this.datasets?.flush(), this.batches?.flush(), ...this.closers.map((close) => close())]);
    await this.logs?.close();
    this.lock?.release();
  }

  /** What a part of db.json is given: its tables (read late: init loads them) and the commit. */
  table<T>(pick: (data: JsonData) => T): [() => T, () => Promise<void>] {
    return [() => pick(this.db.data), () => this.save()];
  }

  save(): Promise<void> {
    // After close the directory may belong to another process: never write to it again.
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    return this.dbCommit.commit();
  }

  commitLogs(): Promise<void> {
    return this.logCommit.commit();
  }

  /** For a log no caller waits on promptly: committed with the next commit, at most CARRY_MS from now. */
  carryLogs(): Promise<void> {
    return this.logCommit.commitWithin(CARRY_MS);
  }

  /** For a batch run's log: while batch logs come together, committed with the next commit, at most BATCH_HOLD_MS from now (json-batch-rows.ts). */
  holdLogs(): Promise<void> {
    const hold = this.logHold.hold(this.batchLogsWaiting > 0);
    this.batchLogsWaiting++;
    const done = () => void this.batchLogsWaiting--;
    const committed = hold > 0 ? this.logCommit.commitWithin(hold) : this.logCommit.commit();
    committed.then(done, done);
    return committed;
  }

  /** An organization and everything it owns, from every file of the directory. */
  async purgeOrganization(orgId: string): Promise<void> {
    purgeOrganizationData(this.db.data, orgId);
    this.resultCache.purgeOrganization(orgId);
    await this.datasets.deleteOrg(orgId);
    await this.batches.deleteOrg(orgId);
    // The logs leave the index at once; the file is rewritten inside the log commit.
    const purgedLogs = this.logs.purgeOrganization(orgId);
    await this.save();
    // After the commit that took the files' metadata: no metadata ever names missing bytes.
    await dropFileBytes(this.filesDir, orgId);
    if (purgedLogs) await this.logCommit.commit();
  }
}

/** Every resource part of the store, over one data directory. */
const partsOver = (dir: JsonDataDir) => {
  const budgets = jsonBudgets(...dir.table((d) => d as BudgetTables));
  const organizations = dir.table((d) => d.organizations);
  return {
    ...jsonOrganizations(...organizations, (orgId) => dir.purgeOrganization(orgId)),
    ...jsonApiKeys(...dir.table((d) => d.api_keys), organizations[0]),
    ...jsonProjects(...dir.table((d) => d.projects)),
    ...jsonEvaluators(...dir.table((d) => d)),
    ...jsonJudges(...dir.table((d) => d)),
    ...jsonModels(...dir.table((d) => d.models!)),
    ...jsonLogs(dir),
    ...jsonResultCache(dir.resultCache),
    ...jsonDatasets(() => dir.datasets),
    ...jsonBatches(
      () => dir.batches,
      (spend) => budgets.settleBudget(spend.key, 0, spend.usd),
    ),
    ...jsonCalibration(...dir.table((d) => ({ annotations: d.annotations!, calibration_runs: d.calibration_runs! }))),
    ...jsonSurface(...dir.table((d) => ({ claim_tokens: d.claim_tokens!, synthetic_data: d.synthetic_data! }))),
    ...budgets,
    ...jsonProviderBatches(...dir.table((d) => d.provider_batches!)),
    ...jsonFiles(dir.filesDir, ...dir.table((d) => d.files!)),
  };
};

export class JsonStore extends composed<ReturnType<typeof partsOver>>() implements Store {
  readonly kind = 'json' as const;
  private readonly dir: JsonDataDir;

  constructor(opts: JsonStoreOptions) {
    const dir = new JsonDataDir(opts);
    super(partsOver(dir));
    this.dir = dir;
  }

  get dataDir() {
    return this.dir.path;
  }
  /** Rooms that write into the data directory (review queues) add their close here. */
  get closers() {
    return this.dir.closers;
  }
  init() {
    return this.dir.init();
  }
  close() {
    return this.dir.close();
  }
  async ping(): Promise<void> {
    if (this.dir.closed) throw new Error('store is closed');
  }
}
