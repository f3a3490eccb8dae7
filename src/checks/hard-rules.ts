// Hard rules in a generation intent ("must answer in JSON", "never more than 3 sentences", "at most
// 200 words") become check or code evaluators (SPEC section 15, issue 29 item 3): a rule a program
// can decide is not left to a model. Deterministic: read from the intent's text, never guessed.
import type { Check } from '../schemas/checks.ts';

export interface HardRule {
  name: string;
  intent: string;
  kind: 'check' | 'code';
  checks?: Check[];
  code?: string;
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  fifty: 50,
  hundred: 100,
};
const NUM = '(\\d{1,6}|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|fifty|hundred)';
const toNumber = (s: string) => NUMBER_WORDS[s.toLowerCase()] ?? Number(s);

// "no more than 3", "at most three", "never more than 5", "maximum of 200", "up to 100": the bound is kept;
// "under 200", "fewer than 4", "less than 50": the bound is one less.
const AT_MOST = `(?:no more than|not more than|never more than|at most|maximum of|a maximum of|max(?:imum)?|up to|within)`;
const BELOW = `(?:under|fewer than|less than|below)`;
const bound = (unit: string) => new RegExp(`\\b(?:(${AT_MOST})|(${BELOW}))\\s+${NUM}\\s+${unit}\\b`, 'i');

const JSON_RULE =
  /\b(?:(?:answers?|respond|responds|replies|reply|output|outputs|returns?|format(?:ted)?)\s+(?:only\s+|strictly\s+|always\s+)?(?:in|as|with)\s+(?:a\s+|valid\s+|strict\s+)*JSON|must\s+(?:be|answer\s+in|return)\s+(?:a\s+|valid\s+)*JSON|(?:valid|well-formed)\s+JSON\s+(?:only|object|output|response))\b/i;

function limit(intent: string, unit: string): number | null {
  const m = bound(unit).exec(intent);
  if (!m) return null;
  const n = toNumber(m[3]);
  if (!Number.isFinite(n) || n < 1) return null;
  return m[2] ? n - 1 : n;
}

/** The length limits an intent may state: the words that name the unit, the check's unit, the rule's noun (words first). */
const LENGTH_RULES: Array<[pattern: string, unit: 'words' | 'chars', noun: string]> = [
  ['words?', 'words', 'words'],
  ['(?:characters?|chars)', 'chars', 'characters'],
];

export function hardRulesOf(intent: string): HardRule[] {
  const rules: HardRule[] = [];
  if (JSON_RULE.test(intent)) {
    rules.push({ name: 'Answers in valid JSON', intent: 'The application must answer in JSON: the response parses as JSON.', kind: 'check', checks: [{ type: 'json_valid' }] });
  }
  for (const [pattern, unit, noun] of LENGTH_RULES) {
    const max = limit(intent, pattern);
    if (max === null) continue;
    rules.push({
      name: `At most ${max} ${noun}`,
      intent: `The response is at most ${max} ${noun} long, as the application requires.`,
      kind: 'check',
      checks: [{ type: 'length', max, unit }],
    });
  }
  const sentences = limit(intent, 'sentences?');
  if (sentences !== null) {
    rules.push({
      name: `At most ${sentences} sentence${sentences === 1 ? '' : 's'}`,
      intent: `The response has at most ${sentences} sentence${sentences === 1 ? '' : 's'}, as the application requires.`,
      kind: 'code',
      code: `const sentences = input.response.split(/[.!?]+(?:\\s+|$)/).filter((s) => s.trim()).length;\nreturn sentences <= ${sentences} ? { score: 1, justification: sentences + ' sentence(s), within ${sentences}.' } : { score: 0, justification: sentences + ' sentences, more than ${sentences}.' };`,
    });
  }
  return rules;
}
