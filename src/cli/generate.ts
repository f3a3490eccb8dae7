// tribunal judges generate "<intent>": walks the outcomes of SPEC section 5 in a terminal.
// multiple_stages -> pick a stage; missing_context_from_system_goal -> answer each question and call
// again with the same judge_id; success -> show the judge. Without a terminal it never waits: it
// exits with EXIT.inputNeeded and says which flag supplies what is missing.
import { oneOf, str, list, type Command } from './command.ts';
import type { ApiClient } from './client.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { printJson } from './output.ts';
import { isInteractive, Prompter } from './prompt.ts';
import { printJudge } from './judge-view.ts';
import { withCommandName } from '../invocation.ts';
import type { z } from 'zod';
import type { GenerateJudgeOutput } from '../generation/types.ts';
import type { Judge } from '../schemas/core.ts';

// The wire types, from the zod schemas (one source of truth).
type Outcome = z.infer<typeof GenerateJudgeOutput>;
type DraftCandidate = Pick<Judge, 'id' | 'name' | 'intent' | 'project_id' | 'generation'>;

/** The caller's newest draft generated from exactly this intent (in this project, when given). */
async function findOwnDraft(api: ApiClient, intent: string, projectId: string | undefined): Promise<DraftCandidate | undefined> {
  // search narrows the list on the server (it matches names, intents and stages); the match is exact here.
  const own = await api.listAll<DraftCandidate>('/v1/judges/', { search: intent.slice(0, 100), include_public: false, project_id: projectId }, 1000);
  return own.find((j) => j.generation?.status === 'draft' && j.intent.trim() === intent);
}

/** Rounds of questions before giving up (a server that keeps asking must not loop forever). */
const MAX_ROUNDS = 6;

function parseContexts(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--context takes key=value (the key is a form_field_name the server asked about); got ${JSON.stringify(pair)}.`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

export const generateCommand: Command = {
  summary: 'generate a judge from a plain-language description',
  help: `Usage: tribunal judges generate "<intent>" [options]

Describe the application, its users, the stage to evaluate and what matters, in a few sentences.
When the description covers several stages, or leaves out something the judge needs, the CLI asks
on a terminal; without one (CI) it exits with code 9 and names the flags to add.

  --stage <stage>            the stage to evaluate (one the server listed, or a custom name)
  --context <key=value>      an answer to a missing-context question (repeat; key = the field name)
  --judge-id <id>            continue a draft judge from an earlier missing-context answer
  --visibility <v>           private (default) or public
  --reasoning-effort <e>     off, low, medium (default) or high
  --context-aware            add evaluators that catch hallucination and drift from retrieved contexts
  --project <id>             project for the judge
  --new-draft                start a new draft even when one of yours has the same description

Without --judge-id, a draft of yours (a judge generation left waiting for answers) with exactly the
same description is continued instead of storing another draft, so repeated runs in CI do not pile
drafts up; --new-draft turns that off. Delete drafts you abandoned with tribunal judges delete.`,
  options: {
    stage: { type: 'string' },
    context: { type: 'string', multiple: true },
    'judge-id': { type: 'string' },
    visibility: { type: 'string' },
    'reasoning-effort': { type: 'string' },
    'context-aware': { type: 'boolean' },
    project: { type: 'string' },
    'new-draft': { type: 'boolean' },
  },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const intent = positionals[0].trim();
    if (!intent) throw usageError('the intent is empty: describe the application and the stage to evaluate.');
    const body: Record<string, unknown> = {
      intent,
      stage: str(values.stage),
      judge_id: str(values['judge-id']),
      visibility: oneOf(values.visibility, 'visibility', ['private', 'public'] as const),
      reasoning_effort: oneOf(values['reasoning-effort'], 'reasoning-effort', ['off', 'low', 'medium', 'high'] as const),
      enable_context_aware_evaluators: values['context-aware'] ? true : undefined,
      project_id: str(values.project),
    };
    if (body.judge_id === undefined && !values['new-draft']) {
      const draft = await findOwnDraft(client(), intent, str(values.project));
      if (draft) {
        body.judge_id = draft.id;
        if (!json) process.stderr.write(`Continuing your draft ${draft.name} (${draft.id}), made from the same description (--new-draft starts another).\n`);
      }
    }
    const answers: Record<string, string> = parseContexts(list(values.context));
    if (Object.keys(answers).length) body.extra_contexts = { ...answers };
    const interactive = isInteractive();
    const prompter = new Prompter();
    const say = (line: string) => process.stderr.write(`${line}\n`);
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        if (!json || interactive) say(round === 0 ? 'Generating a judge…' : 'Generating again with your answers…');
        const outcome = await client().post<Outcome>('/v1/judges/generate/', body);

        if (outcome.error_code === 'multiple_stages') {
          const stages = outcome.stages ?? [];
          if (!interactive) {
            if (json) printJson(outcome);
            throw new CliError(
              EXIT.inputNeeded,
              `the description covers several stages (${stages.map((s) => JSON.stringify(s)).join(', ')}): choose one with --stage "<stage>" (a listed one or a custom name).`,
              { body: outcome },
            );
          }
          say('\nThe description covers several stages of the application:');
          stages.forEach((s, i) => say(`  ${i + 1}. ${s}`));
          let chosen: string | undefined;
          while (!chosen) {
            const answer = await prompter.ask(`Which stage should the judge evaluate? [1-${stages.length} or a custom name] `);
            if (answer === null) throw new CliError(EXIT.inputNeeded, 'no stage chosen (input ended).');
            const n = Number(answer);
            chosen = Number.isInteger(n) && n >= 1 && n <= stages.length ? stages[n - 1] : answer || undefined;
          }
          body.stage = chosen;
          continue;
        }

        if (outcome.error_code === 'missing_context_from_system_goal') {
          const questions = outcome.missing_context_from_system_goal ?? [];
          body.judge_id = outcome.judge_id;
          // The server asks only what is still unanswered (answers given before are kept in the draft).
          if (!interactive) {
            if (json) printJson(outcome);
            const flags = questions.map((q) => `  --context ${q.form_field_name}="..."   ${q.form_field_description}`).join('\n');
            throw new CliError(
              EXIT.inputNeeded,
              `the description leaves out what the judge needs to know. Answer with --context (and --judge-id ${outcome.judge_id} to continue this draft):\n${flags}`,
              { body: outcome },
            );
          }
          say(
            `\nTo finish the judge${outcome.judge_id ? ` (draft ${outcome.judge_id})` : ''}, answer ${questions.length === 1 ? 'this question' : `these ${questions.length} questions`}:`,
          );
          for (const q of questions) {
            let answer: string | null = '';
            while (!answer) {
              answer = await prompter.ask(`\n${q.form_field_description}\n> `);
              if (answer === null) throw new CliError(EXIT.inputNeeded, `no answer for ${q.form_field_name} (input ended).`);
            }
            answers[q.form_field_name] = answer;
          }
          body.extra_contexts = { ...answers };
          continue;
        }

        if (!outcome.judge_id) throw new CliError(EXIT.rejected, 'the server answered generation without a judge id or a follow-up question.');
        const judge = await client().get(`/v1/judges/${encodeURIComponent(outcome.judge_id)}/`);
        if (json) {
          printJson({ ...outcome, judge });
        } else {
          console.log(`Generated judge ${judge.name} (${judge.id}).\n`);
          printJudge(judge);
          console.log(
            withCommandName(`\nRun it: tribunal judges run ${judge.id} --response "..."   or   tribunal eval --judge ${judge.id} --input data.jsonl --out results.jsonl`),
          );
        }
        return EXIT.ok;
      }
      throw new CliError(EXIT.rejected, `generation still asked for more after ${MAX_ROUNDS} rounds; try a more detailed description.`);
    } finally {
      prompter.close();
    }
  },
};
