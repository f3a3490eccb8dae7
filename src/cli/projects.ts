// tribunal projects list|create
import { num, runGroup, str, type Command } from './command.ts';
import { EXIT, usageError } from './errors.ts';
import { clip, day, printJson, printNextPage, printTable } from './output.ts';
import type { Group } from './shared.ts';
import type { Project } from '../schemas/core.ts'; // the wire type, from the zod schema (one source of truth)

const list_: Command = {
  summary: "list your organization's projects",
  help: `Usage: tribunal projects list [--limit N] [--cursor C | --all]`,
  options: { limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
  async run({ values, json, client }) {
    const page = values.all
      ? { results: await client().listAll('/v1/projects/'), next_cursor: null }
      : await client().get('/v1/projects/', { limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      printTable(
        ['ID', 'NAME', 'DEFAULT', 'CREATED', 'DESCRIPTION'],
        page.results.map((p: Project) => [p.id, clip(p.name, 40), p.is_default ? 'yes' : '', day(p.created_at), clip(p.description, 50)]),
      );
      printNextPage(page.next_cursor, 'tribunal projects list');
    }
    return EXIT.ok;
  },
};

const create: Command = {
  summary: 'create a project',
  help: `Usage: tribunal projects create <name> [--description <text>]

  --description <text>   what the project is for`,
  options: { description: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const name = positionals[0].trim();
    if (!name) throw usageError('the project name is empty.');
    const project = await client().post<Project>('/v1/projects/', { name, description: str(values.description) });
    if (json) printJson(project);
    else console.log(`Created project ${project.name} (${project.id}).`);
    return EXIT.ok;
  },
};

const projectCommands: Group = { list: list_, create };

export function projects(argv: string[]): Promise<number> {
  return runGroup('projects', 'Projects scope judges, evaluators and execution logs within your organization.', projectCommands, argv);
}
