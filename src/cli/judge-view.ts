// How a judge is shown in a terminal (judges get, judges generate).
import { clip, day, printFields, printTable, terminalColumns } from './output.ts';
import { withCommandName } from '../invocation.ts';

import type { JudgeFull } from '../schemas/core.ts'; // the wire type, from the zod schema (one source of truth)

export type { JudgeFull };

export function printJudge(judge: JudgeFull): void {
  printFields(
    [
      ['id', judge.id],
      ['name', judge.name],
      ['intent', judge.intent],
      ['stage', judge.stage],
      ['generated', generationLine(judge)],
      [
        'context',
        judge.generation && Object.keys(judge.generation.answers).length
          ? Object.entries(judge.generation.answers)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n')
          : null,
      ],
      ['visibility', judge.visibility],
      ['project', judge.project_id],
      ['version', judge.version],
      ['updated', day(judge.updated_at)],
    ],
    { wrap: ['intent'] },
  );
  console.log(`\nEvaluators (${judge.evaluators.length}):`);
  const rows = judge.evaluators.map((e) => [
    e.name,
    e.id,
    e.is_preset ? 'preset' : 'custom',
    e.pinned_version ? `${e.version} (pinned)` : String(e.version),
    declaredInputs(e) ?? '',
  ]);
  const headers = ['NAME', 'ID', 'KIND', 'VERSION', 'NEEDS'];
  // The intent takes the room the other columns leave on the terminal (issue 26: never wider).
  const used = headers.reduce((sum, h, i) => sum + Math.max(h.length, ...rows.map((r) => String(r[i]).length)) + 2, 0);
  const room = Math.max(8, terminalColumns() - used);
  printTable(
    [...headers, 'INTENT'],
    rows.map((r, i) => [...r, clip(judge.evaluators[i].intent, room)]),
  );
}

/** How generation left the judge: nothing for a hand-made one; a draft says how to finish it. */
function generationLine(judge: JudgeFull): string | null {
  const gen = judge.generation;
  if (!gen) return null;
  const aware = gen.context_aware ? ' (context-aware)' : '';
  if (gen.status === 'complete') return `complete${aware}`;
  const flags = gen.open_questions.map((q) => `--context ${q.form_field_name}="..."`).join(' ');
  return (
    `draft${aware}: cannot run until these are answered:\n` +
    gen.open_questions.map((q) => `- ${q.form_field_name}: ${q.form_field_description}`).join('\n') +
    withCommandName(`\nFinish it: tribunal judges generate "<the same intent>" --judge-id ${judge.id} ${flags}`)
  );
}

/** What an evaluator needs besides the response (or a conversation), and whether it caps the score. */
export function declaredInputs(e: {
  requires_request?: boolean;
  requires_turns?: boolean;
  requires_contexts?: boolean;
  requires_expected_output?: boolean;
  critical?: boolean;
}): string {
  const needs =
    [e.requires_turns && 'turns', e.requires_request && 'request', e.requires_contexts && 'contexts', e.requires_expected_output && 'expected_output'].filter(Boolean).join(', ') ||
    '-';
  return e.critical ? `${needs} (critical)` : needs;
}
