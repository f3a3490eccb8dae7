// Degenerate responses (docs/SCORING.md, "Degenerate responses"): answers that hold nothing to judge
// are scored 0 by the server without asking the model. Strong judges give such answers high scores
// surprisingly often ("One Token to Fool LLM-as-a-Judge", 2025: ":" or "Thought process:"), so the
// rule is the server's, not the model's.

/**
 * Openers that begin a reasoning or an answer but say nothing by themselves, compared after
 * normalizing (lower case, every run of non-letters and non-digits one space). A response made only
 * of these, one after another, is degenerate; any further word makes it a real answer.
 */
export const DEGENERATE_OPENERS = [
  'thought process',
  'thinking',
  'reasoning',
  'explanation',
  'let s think',
  'let s think step by step',
  'let s think about this step by step',
  'let s solve this step by step',
  'let s solve this',
  'let me think',
  'let me think step by step',
  'step 1',
  'solution',
  'answer',
  'final answer',
  'the answer is',
  'the final answer is',
] as const;

// ASCII text is its own NFKC form, and its letters and digits are [a-z0-9] once lower-cased: the
// Unicode normalization and property classes (several microseconds a call) are for the rest.
const ASCII = /^[\x00-\x7f]*$/;
const normalize = (text: string) =>
  ASCII.test(text)
    ? text
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, ' ')
        .trim()
    : text
        .normalize('NFKC')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim();

// Longest first, so "let s think step by step" is taken whole before "let s think".
const OPENERS = [...DEGENERATE_OPENERS].sort((a, b) => b.length - a.length);
/** Each opener with the space that follows it in a longer text, made once (not 17 strings per run). */
const OPENERS_SPACED = OPENERS.map((o) => `${o} `);

const HEAD_CHARS = 64;
/** Longer than the longest opener and its space, with room for what normalizing a cut text changes at its end. */
const HEAD_MIN = Math.max(...DEGENERATE_OPENERS.map((o) => o.length)) + 8;

/** Why the response is degenerate, or null when it has something to judge. */
export function degenerateReason(response: string): string | null {
  if (!/[\p{L}\p{N}]/u.test(response)) {
    return 'The response is degenerate: it holds no letter or digit, so there is nothing to evaluate. Scored 0 without calling the judge model.';
  }
  // Most responses show it in their first words: when the start of the text, normalized, is long
  // enough and is not an opener, the whole text cannot be made of openers. Normalizing a 64-char
  // head changes at most its last few characters against normalizing the whole (a run of
  // separators or a composition cut at the end), far past the longest opener plus its space.
  if (response.length > HEAD_CHARS) {
    const head = normalize(response.slice(0, HEAD_CHARS));
    if (head.length >= HEAD_MIN && !OPENERS_SPACED.some((o) => head.startsWith(o))) return null;
  }
  let rest = normalize(response);
  while (rest) {
    const opener = OPENERS.find((o) => rest === o || rest.startsWith(`${o} `));
    if (!opener) return null;
    rest = rest.slice(opener.length).trim();
  }
  const shown = response.trim().length > 80 ? `${response.trim().slice(0, 80)}…` : response.trim();
  return `The response is degenerate: it is only a reasoning or answer opener (${JSON.stringify(shown)}) with nothing after it, so there is nothing to evaluate. Scored 0 without calling the judge model.`;
}
