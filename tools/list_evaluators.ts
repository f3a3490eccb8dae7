import { z } from 'zod';
import { evaluatorToWire } from '../src/domain/evaluators.ts';
import { pageQuery, toPage } from '../src/domain/pagination.ts';
import { checkProjectFilter } from '../src/domain/projects.ts';
import { Evaluator, page, PageParams } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'list_evaluators',
  title: 'List evaluators',
  description:
    'Browse evaluators, each of which scores one quality of a response from 0 to 1: yours and the shipped presets (faithfulness, relevance, safety, tone and more); public ones of other organizations with include_public: true. ' +
    'Use it to pick evaluators for create_judge, or one to run alone with run_evaluator. Each result shows its rubric and the inputs it requires (requires_request, requires_turns, requires_contexts, requires_expected_output). Newest first; presets come last. Returns {results, next_cursor}.',
  input: z.object({
    search: z.string().optional().describe('case-insensitive text to find in evaluator names and intents'),
    project_id: z.string().optional().describe('only evaluators of this project of yours'),
    include_public: z.boolean().optional().describe('also list public evaluators of other organizations (default false: yours and the presets)'),
    is_preset: z.boolean().optional().describe('true: only shipped presets; false: no presets'),
    ...PageParams,
  }),
  output: page(Evaluator),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    await checkProjectFilter(ctx, input.project_id);
    const result = await ctx.store.listEvaluators(
      {
        org_id: ctx.caller.org.id,
        // issue 26: yours and the presets by default; others' public ones on request.
        include_public: input.include_public ?? false,
        include_presets: true,
        project_id: input.project_id,
        search: input.search,
        is_preset: input.is_preset,
      },
      pageQuery(input, ctx.config.limits.pageSize),
    );
    return toPage(result, evaluatorToWire);
  },
});
