// The commands the judges and evaluators groups share (list, get, create, update, delete, run). On the
// server both are the same kind of resource: named, versioned, found by id or exact name, run through
// .../execute/. So each group says only what differs: its flags, the body they make, and how a record
// is shown; the request, the --json branch and the messages are written once here.
import { num, str, type Command, type Values } from './command.ts';
import { resolveId, type ApiClient } from './client.ts';
import { EXIT, usageError } from './errors.ts';
import { printJson, printNextPage } from './output.ts';
import { confirm, isInteractive } from './prompt.ts';
import { inFlagTerms, printRunResult, type RunResult } from './shared.ts';

export type VersionedKind = 'judge' | 'evaluator';

type Options = NonNullable<Command['options']>;
/** Query parameters as the REST client takes them. */
type Query = NonNullable<Parameters<ApiClient['get']>[1]>;

/** What every version of a judge or an evaluator carries, for the messages written here. */
interface VersionedRecord {
  id: string;
  name: string;
  version: number;
}

/** What every command says of itself: its line in the group's help, its own help and its flags. */
interface CommandText {
  summary: string;
  help: string;
  options?: Options;
}

const textOf = ({ summary, help, options }: CommandText): CommandText => ({ summary, help, options });

const memberPath = (kind: VersionedKind, id: string) => `/v1/${kind}s/${encodeURIComponent(id)}/`;

/** The ids of the caller's own projects: what tells its resources from other organizations' public ones. */
export async function ownProjects(api: ApiClient): Promise<Set<string>> {
  return new Set((await api.listAll<{ id: string }>('/v1/projects/', {})).map((p) => p.id));
}

interface ListSpec<T> extends CommandText {
  /** The list's filters from the flags (it may refuse flags that contradict each other). */
  query(values: Values): Query;
  /** The page as a table; `mine` holds the caller's own projects when others' public ones are listed too. */
  printRows(results: T[], mine: Set<string> | null): void;
}

/** `list`: one page (--limit, --cursor) or every page (--all); --public adds others' public ones. */
export function listCommand<T>(kind: VersionedKind, spec: ListSpec<T>): Command {
  const collection = `/v1/${kind}s/`;
  return {
    ...textOf(spec),
    async run({ values, json, client }) {
      const query = spec.query(values);
      if (values.own && values.public) throw usageError('give --own or --public, not both.');
      const page: { results: T[]; next_cursor: string | null } = values.all
        ? { results: await client().listAll<T>(collection, query), next_cursor: null }
        : await client().get(collection, { ...query, limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
      if (json) printJson(page);
      else {
        // With others' public ones listed, two can share a name: the table says whose each is (issue 26).
        const mine = values.public ? await ownProjects(client()) : null;
        spec.printRows(page.results, mine);
        printNextPage(page.next_cursor, `tribunal ${kind}s list`);
      }
      return EXIT.ok;
    },
  };
}

interface ShowSpec<T> extends CommandText {
  /** Query parameters of the read (a judge's --version). */
  query?(values: Values): Query;
  print(record: T): void;
}

/** `get`: one record by id or exact name. */
export function showCommand<T>(kind: VersionedKind, spec: ShowSpec<T>): Command {
  return {
    ...textOf(spec),
    positionals: [1, 1],
    async run({ values, positionals, json, client }) {
      const id = await resolveId(client(), kind, positionals[0]);
      const record = await client().get<T>(memberPath(kind, id), spec.query?.(values));
      if (json) printJson(record);
      else spec.print(record);
      return EXIT.ok;
    },
  };
}

interface CreateSpec<T> extends CommandText {
  body(values: Values): Record<string, unknown>;
  /** The body fields a create cannot go without, each with the flag that gives it. */
  required(body: Record<string, unknown>): Array<readonly [field: string, flag: string]>;
  /** The line printed for the new record. */
  created(record: T): string;
}

/** `create`: a body from --file and the flags; what is required is named by its flag. */
export function createCommand<T>(kind: VersionedKind, spec: CreateSpec<T>): Command {
  return {
    ...textOf(spec),
    async run({ values, json, client }) {
      const body = spec.body(values);
      for (const [field, flag] of spec.required(body)) {
        if (body[field] === undefined) throw usageError(`${flag} is required (see tribunal ${kind}s create --help).`);
      }
      const record = await client().post<T>(`/v1/${kind}s/`, body);
      if (json) printJson(record);
      else console.log(spec.created(record));
      return EXIT.ok;
    },
  };
}

interface UpdateSpec extends CommandText {
  body(values: Values): Record<string, unknown>;
  /** Said when no flag changes anything. */
  nothingToChange: string;
}

/** `update`: only the fields given change, and the server makes a new version. */
export function updateCommand(kind: VersionedKind, spec: UpdateSpec): Command {
  return {
    ...textOf(spec),
    positionals: [1, 1],
    async run({ values, positionals, json, client }) {
      const body = spec.body(values);
      if (!Object.keys(body).length) throw usageError(spec.nothingToChange);
      const id = await resolveId(client(), kind, positionals[0]);
      const record = await client().patch<VersionedRecord>(memberPath(kind, id), body);
      if (json) printJson(record);
      else console.log(`Updated ${kind} ${record.name} (${record.id}); now version ${record.version}.`);
      return EXIT.ok;
    },
  };
}

/** `delete`: asks first on a terminal; without one, --yes is required. */
export function deleteCommand(kind: VersionedKind, summary: string): Command {
  return {
    summary,
    help: `Usage: tribunal ${kind}s delete <id or exact name> [--yes]

  --yes   do not ask for confirmation (required when there is no terminal)`,
    options: { yes: { type: 'boolean', short: 'y' } },
    positionals: [1, 1],
    async run({ values, positionals, json, client }) {
      const id = await resolveId(client(), kind, positionals[0]);
      if (!values.yes) {
        if (!isInteractive()) throw usageError('deleting needs --yes when there is no terminal to confirm on.');
        if (!(await confirm(`Delete ${kind} ${positionals[0]}${positionals[0] === id ? '' : ` (${id})`}?`))) {
          console.error('Not deleted.');
          return EXIT.ok;
        }
      }
      const result = await client().delete(memberPath(kind, id));
      if (json) printJson(result);
      else console.log(`Deleted ${kind} ${id}.`);
      return EXIT.ok;
    },
  };
}

interface ExecuteSpec extends CommandText {
  body(values: Values): Record<string, unknown>;
}

/** `run`: one request/response pair scored on the server; a missing input is named by its flag. */
export function executeCommand(kind: VersionedKind, spec: ExecuteSpec): Command {
  const title = kind === 'judge' ? 'Judge' : 'Evaluator';
  return {
    ...textOf(spec),
    positionals: [1, 1],
    async run({ values, positionals, json, client }) {
      const body = spec.body(values);
      const id = await resolveId(client(), kind, positionals[0]);
      const result = await client()
        .post<RunResult>(`${memberPath(kind, id)}execute/`, body)
        .catch((err) => Promise.reject(inFlagTerms(err)));
      printRunResult(`${title} ${positionals[0]}`, result, json);
      return EXIT.ok;
    },
  };
}
