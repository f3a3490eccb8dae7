// The seam between generate_judge and the judge generator (SPEC section 5).
import type { ToolContext } from '../tool.ts';

export interface GenerateJudgeInput {
  intent: string;
  visibility?: 'private' | 'public';
  reasoning_effort?: 'off' | 'low' | 'medium' | 'high';
  judge_id?: string;
  extra_contexts?: Record<string, string>;
  stage?: string;
  enable_context_aware_evaluators?: boolean;
  project_id?: string;
}

export type GenerateJudgeOutcome =
  | { judge_id: string; evaluator_details: Array<{ id: string; name: string; intent: string; is_preset: boolean }> }
  | {
      error_code: 'missing_context_from_system_goal';
      judge_id: string;
      missing_context_from_system_goal: Array<{ form_field_name: string; form_field_description: string }>;
    }
  | { error_code: 'multiple_stages'; stages: string[] };

export interface JudgeGenerator {
  generate(ctx: ToolContext, input: GenerateJudgeInput): Promise<GenerateJudgeOutcome>;
}
