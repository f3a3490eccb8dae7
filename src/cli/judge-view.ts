// How a judge is shown in a terminal (judges get, judges generate).
import { clip, day, printFields, printTable } from './output.ts';

export interface JudgeFull {
  id: string;
  name: string;
  intent: string;
  stage: string | null;
  visibility: string;
  project_id: string;
  version: number;
  created_at: string;
  updated_at: string;
  evaluators: Array<{ id: string; name: string; version: number; pinned_version?: number | null; requires_contexts?: boolean; requires_expected_output?: boolean; is_preset?: boolean; intent?: string }>;
}

export function printJudge(judge: JudgeFull): void {
  printFields([
    ['id', judge.id],
    ['name', judge.name],
    ['intent', judge.intent],
    ['stage', judge.stage],
    ['visibility', judge.visibility],
    ['project', judge.project_id],
    ['version', judge.version],
    ['updated', day(judge.updated_at)],
  ]);
  console.log(`\nEvaluators (${judge.evaluators.length}):`);
  printTable(
    ['NAME', 'ID', 'KIND', 'VERSION', 'NEEDS', 'INTENT'],
    judge.evaluators.map((e) => [
      e.name,
      e.id,
      e.is_preset ? 'preset' : 'custom',
      e.pinned_version ? `${e.version} (pinned)` : e.version,
      [e.requires_contexts ? 'contexts' : '', e.requires_expected_output ? 'expected_output' : ''].filter(Boolean).join(', ') || '-',
      clip(e.intent, 60),
    ]),
  );
}
