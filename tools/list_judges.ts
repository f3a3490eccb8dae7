import { z } from 'zod';
import { judgeToWire } from '../src/domain/judges.ts';
import { pageQuery, toPage } from '../src/domain/pagination.ts';
import { checkProjectFilter } from '../src/domain/projects.ts';
import { Judge, page, PageParams } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'list_judges',
  title: 'List judges',
  description:
    "Find a judge to run. Lists your organization's judges, newest first; public judges of other organizations only with include_public: true. " +
    'Each judge is a named set of evaluators for one stage of an application. Use `search` to match names and intents; pass the chosen id or name to get_judge or run_judge. ' +
    'Returns {results, next_cursor}; pass next_cursor back as `cursor` for more. If none fits, build one with generate_judge (from a description) or create_judge (from chosen evaluators).',
  input: z.object({
    search: z.string().optional().describe('case-insensitive text to find in judge names, intents and stages'),
    project_id: z.string().optional().describe('only judges of this project of yours'),
    include_public: z.boolean().optional().describe('also list public judges of other organizations (default false: yours only)'),
    ...PageParams,
  }),
  output: page(Judge),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    await checkProjectFilter(ctx, input.project_id);
    const result = await ctx.store.listJudges(
      { org_id: ctx.caller.org.id, include_public: input.include_public ?? false, project_id: input.project_id, search: input.search }, // issue 26: others' public ones on request
      pageQuery(input, ctx.config.limits.pageSize),
    );
    // Another organization's draft (a demo user's abandoned generation) can neither run nor be finished by this caller.
    return toPage({ ...result, items: result.items.filter((j) => j.org_id === ctx.caller.org.id || j.generation?.status !== 'draft') }, judgeToWire);
  },
});
