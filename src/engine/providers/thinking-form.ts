// How a Messages API request asks for (or leaves out) thinking, per model generation. The SDK's
// types accept every form for every model; the API does not:
// - up to Claude 4.5 (and any name we cannot read, such as a model behind a compatible endpoint):
//   `thinking: {type: "enabled", budget_tokens}`, and a forced tool_choice when not thinking;
// - Claude 4.6 and the 5.0 models (sonnet-5, opus-5): `thinking: {type: "adaptive"}` with
//   `output_config.effort` ("enabled" is deprecated on 4.6 and refused from 5.0 on); their thinking
//   can be turned off, so a run without thinking still forces the tool (5.0 thinks by default, so it
//   is turned off explicitly);
// - later models (Sonnet/Opus/Haiku 5.5 and up, Opus 4.7 and 4.8, every Fable and Mythos) always
//   think adaptively and refuse a forced tool_choice (400): the tool is offered with
//   tool_choice auto (the prompts ask for it; a missed call is a malformed answer, retried), and a run
//   that asked for no thinking asks for low effort instead.
// Sources: platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5 (forced tool use
// returns an error; adaptive thinking on by default) and the adaptive-thinking pages (2026-11).
import type Anthropic from '@anthropic-ai/sdk';

type Effort = 'low' | 'medium' | 'high';
/** budget: manual budget form; adaptive: adaptive, off unless asked (4.6); adaptive_on: adaptive, on unless turned off (5.0); always: adaptive, cannot be turned off. */
export type ThinkingGeneration = 'budget' | 'adaptive' | 'adaptive_on' | 'always';

const NAMED = /^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/;

/** Generations by model name, read once a name (two regular expressions, twice per call otherwise); a few names per server. */
const generations = new Map<string, ThinkingGeneration>();
const GENERATIONS_KEPT = 256;

export function thinkingGeneration(model: string): ThinkingGeneration {
  let generation = generations.get(model);
  if (generation === undefined) {
    generation = readGeneration(model);
    if (generations.size >= GENERATIONS_KEPT) generations.clear();
    generations.set(model, generation);
  }
  return generation;
}

function readGeneration(model: string): ThinkingGeneration {
  if (/^claude-(fable|mythos)(-|$)/.test(model)) return 'always';
  const match = NAMED.exec(model);
  if (!match) return 'budget';
  const [major, minor] = [Number(match[2]), Number(match[3] ?? 0)];
  if (major < 4 || (major === 4 && minor < 6)) return 'budget';
  if (major === 4 && minor === 6) return 'adaptive';
  if (major === 5 && minor === 0) return 'adaptive_on';
  return 'always';
}

/** A token budget (what generation's reasoning_effort maps to) as an effort level. */
export function effortFor(budget: number): Effort {
  return budget <= 1024 ? 'low' : budget <= 4096 ? 'medium' : 'high';
}

// What a model that always thinks gets on top of the answer's own max_tokens, at low effort.
const ALWAYS_THINKING_ALLOWANCE = 2048;

export interface ThinkingShape {
  max_tokens: number;
  tool_choice: Anthropic.ToolChoice;
  thinking?: Anthropic.ThinkingConfigParam;
  output_config?: Anthropic.OutputConfig;
}

/** max_tokens, tool_choice and the thinking fields of one structured call. */
export function thinkingShape(model: string, toolName: string, maxTokens: number, thinkingBudget = 0): ThinkingShape {
  const generation = thinkingGeneration(model);
  const thinking = thinkingBudget > 0;
  const budget = Math.max(1024, Math.floor(thinkingBudget));
  const forced: Anthropic.ToolChoice = { type: 'tool', name: toolName, disable_parallel_tool_use: true };
  // The API refuses a forced tool_choice while thinking; then the prompt asks for the tool.
  const auto: Anthropic.ToolChoice = { type: 'auto', disable_parallel_tool_use: true };
  if (generation === 'budget') {
    // With thinking, max_tokens must exceed the thinking budget: the answer keeps its own allowance.
    return thinking
      ? { max_tokens: budget + maxTokens, tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: budget } }
      : { max_tokens: maxTokens, tool_choice: forced };
  }
  if (thinking) {
    return { max_tokens: budget + maxTokens, tool_choice: auto, thinking: { type: 'adaptive' }, output_config: { effort: effortFor(budget) } };
  }
  if (generation === 'adaptive') return { max_tokens: maxTokens, tool_choice: forced };
  if (generation === 'adaptive_on') return { max_tokens: maxTokens, tool_choice: forced, thinking: { type: 'disabled' } };
  return { max_tokens: maxTokens + ALWAYS_THINKING_ALLOWANCE, tool_choice: auto, thinking: { type: 'adaptive' }, output_config: { effort: 'low' } };
}
