// Server-side key management for self-hosters (`tribunal keys ...`): make an organization and its
// keys without any key to start from. Runs on a store; the CLI decides which (src/cli/key-store.ts),
// and a server that owns the JSON data directory runs it for the CLI (admin-socket.ts).
import { mintApiKey } from './auth.ts';
import type { Config } from './config.ts';
import { apiKeyToWire } from './domain/api-keys.ts';
import { createOrganization } from './domain/orgs.ts';
import type { ApiKey } from './schemas.ts';
import type { Store } from './store/types.ts';
import { budgetStatus } from './budgets/budgets.ts';

export type KeyCommand =
  | { op: 'create'; org: string; name?: string; expires_in_days?: number }
  | { op: 'list'; org: string }
  | { op: 'revoke'; org: string; key: string }
  // Budgets (room h-cost): an organization's own daily cap in USD (null: back to the server default).
  | { op: 'budget'; org: string; daily_usd?: number | null };

/** A key command that failed for a reason the caller can fix; `not_found` names a missing org or key. */
export class KeyCommandError extends Error {
  constructor(
    readonly code: 'not_found' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'KeyCommandError';
  }
}

export interface CreatedKey {
  organization_id: string;
  organization_name: string;
  created_organization: boolean;
  project_id: string | null;
  key: ApiKey;
  api_key: string;
}

async function orgByName(store: Store, name: string) {
  const org = await store.findOrganizationByName(name);
  if (!org) throw new KeyCommandError('not_found', `No organization named ${JSON.stringify(name)}; create one with: tribunal keys create --org ${JSON.stringify(name)}`);
  return org;
}

async function allKeys(store: Store, orgId: string) {
  const keys = [];
  let after: { created_at: string; id: string } | undefined;
  do {
    const page = await store.listApiKeys(orgId, { limit: 200, after });
    keys.push(...page.items);
    after = page.last;
  } while (after);
  return keys;
}

export async function runKeyCommand(store: Store, _config: Config, cmd: KeyCommand): Promise<unknown> {
  if (!cmd || typeof cmd.org !== 'string' || !cmd.org.trim()) throw new KeyCommandError('invalid', 'An organization name is required (--org <name>).');
  const ttlMs = 'expires_in_days' in cmd && cmd.expires_in_days ? cmd.expires_in_days * 86_400_000 : null;
  switch (cmd.op) {
    case 'create': {
      const existing = await store.findOrganizationByName(cmd.org);
      if (!existing) {
        const made = await createOrganization(store, { name: cmd.org, isDemo: false, keyName: cmd.name ?? 'admin', keyTtlMs: ttlMs });
        const key = await store.getApiKey(made.key_id);
        return {
          organization_id: made.organization.id,
          organization_name: cmd.org,
          created_organization: true,
          project_id: made.project_id,
          key: apiKeyToWire(key!),
          api_key: made.api_key,
        } satisfies CreatedKey;
      }
      const { secret, record } = mintApiKey(existing.id, cmd.name ?? 'admin', ttlMs ? new Date(Date.now() + ttlMs).toISOString() : null);
      await store.createApiKey(record);
      return {
        organization_id: existing.id,
        organization_name: existing.name,
        created_organization: false,
        project_id: null,
        key: apiKeyToWire(record),
        api_key: secret,
      } satisfies CreatedKey;
    }
    case 'list': {
      const org = await orgByName(store, cmd.org);
      return (await allKeys(store, org.id)).map(apiKeyToWire);
    }
    case 'revoke': {
      const org = await orgByName(store, cmd.org);
      const key = (await allKeys(store, org.id)).find((k) => k.id === cmd.key || k.prefix === cmd.key);
      if (!key) throw new KeyCommandError('not_found', `Organization ${cmd.org} has no key ${JSON.stringify(cmd.key)} (give its id or prefix; see tribunal keys list).`);
      const updated = key.revoked_at ? key : await store.updateApiKey(key.id, { revoked_at: new Date().toISOString() });
      return apiKeyToWire(updated ?? key);
    }
    case 'budget': {
      const org = await orgByName(store, cmd.org);
      if (cmd.daily_usd !== undefined) {
        if (cmd.daily_usd !== null && !(typeof cmd.daily_usd === 'number' && Number.isFinite(cmd.daily_usd) && cmd.daily_usd >= 0))
          throw new KeyCommandError('invalid', 'The daily budget is a number of USD, 0 or more (or "none" to use the server default).');
        await store.setBudgetCap({ org_id: org.id, scope: 'org', scope_id: org.id, period: 'daily', cap_usd: cmd.daily_usd });
      }
      return budgetStatus(store, _config, org.id);
    }
    default:
      throw new KeyCommandError('invalid', `Unknown key command ${JSON.stringify((cmd as { op: unknown }).op)}.`);
  }
}
