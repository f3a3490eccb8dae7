import { z } from 'zod';
import { pageQuery, toPage } from '../src/domain/pagination.ts';
import { projectToWire } from '../src/domain/projects.ts';
import { page, PageParams, Project } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'list_projects',
  title: 'List projects',
  description:
    "List your organization's projects, newest first. Projects scope judges, evaluators and execution logs: pass a project_id to other tools to work inside one. " +
    'Resources created without project_id land in the default project (is_default: true).',
  input: z.object({ ...PageParams }),
  output: page(Project),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    return toPage(await ctx.store.listProjects(ctx.caller.org.id, pageQuery(input, ctx.config.limits.pageSize)), projectToWire);
  },
});
