// The budgets part of the Store contract (store-contract-budgets.ts) on both stores, on its own so
// that it can be run without the whole contract suite.
import { after } from 'node:test';
import type { Store } from '../src/store/types.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { openTestPostgresStore } from './helpers/postgres.ts';
import { defineBudgetContract } from './store-contract-budgets.ts';

const tempDir = jsonTempDirs('tribunal-budgets-');
const open: Store[] = [];
after(() => Promise.all(open.map((s) => s.close())));
const track = async (s: Promise<Store>) => (open.push(await s), open[open.length - 1]);

defineBudgetContract(() => (process.env.TRIBUNAL_TEST_STORE === 'postgres' ? track(openTestPostgresStore()) : track(openJson(tempDir()))));
