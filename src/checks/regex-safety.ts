// Catastrophic backtracking (ReDoS) is refused when a check is saved: JavaScript's regex engine
// backtracks, and a run has no time bound inside it. The rule is the classic "star height": a
// quantified group that itself holds a quantifier ((a+)+, (\w*\s?)*, (a|aa){2,}) may take
// exponential time on a near-miss, and so may a quantified group of overlapping alternatives
// ((a|a)*) and a quantified back-reference. Linear patterns (^\d{3}-\d{4}$, (foo|bar)+) pass.
// The check is conservative: it refuses some safe patterns, which can be rewritten without nesting.

interface Group {
  /** The group (or its subgroups) holds a quantifier that can repeat (+, *, {n,}, {n,m} with m > 1). */
  quantified: boolean;
  alternatives: string[];
  current: string;
}

const REPEATING_BRACE = /^\{(\d+)(,(\d*))?\}/;

/** Why the pattern risks catastrophic backtracking, or null when it does not. */
export function backtrackingRisk(pattern: string): string | null {
  const stack: Group[] = [{ quantified: false, alternatives: [], current: '' }];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const top = stack[stack.length - 1];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9k]/.test(next) && repeats(pattern, i + 2)) return 'a repeated back-reference';
      top.current += c + next;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      top.current += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      top.current += c;
      continue;
    }
    if (c === '(') {
      stack.push({ quantified: false, alternatives: [], current: '' });
      // Skip the group's modifiers (?:, ?=, ?!, ?<=, ?<!, ?<name>).
      const mod = /^\(\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)/.exec(pattern.slice(i));
      if (mod) i += mod[0].length - 1;
      continue;
    }
    if (c === ')') {
      const group = stack.pop();
      if (!group || stack.length === 0) return null; // unbalanced: the RegExp constructor reports it
      group.alternatives.push(group.current);
      const parent = stack[stack.length - 1];
      if (repeats(pattern, i + 1)) {
        if (group.quantified) return `a repeated group that itself repeats (${shown(pattern, i)})`;
        if (overlapping(group.alternatives)) return `a repeated group of overlapping alternatives (${shown(pattern, i)})`;
        parent.quantified = true;
      } else if (group.quantified) parent.quantified = true;
      parent.current += `(${group.alternatives.join('|')})`;
      continue;
    }
    if (c === '|') {
      top.alternatives.push(top.current);
      top.current = '';
      continue;
    }
    if ((c === '+' || c === '*' || c === '{') && repeats(pattern, i)) top.quantified = true;
    top.current += c;
  }
  return null;
}

/** Whether the quantifier at `at` (if any) can repeat its operand more than once. */
function repeats(pattern: string, at: number): boolean {
  const c = pattern[at];
  if (c === '+' || c === '*') return true;
  if (c !== '{') return false;
  const m = REPEATING_BRACE.exec(pattern.slice(at));
  if (!m) return false;
  if (m[2] === undefined) return Number(m[1]) > 1;
  return m[3] === '' || Number(m[3]) > 1;
}

/** Two alternatives that can match the same text start (equal, or one a prefix of another, or both wildcards). */
function overlapping(alternatives: string[]): boolean {
  if (alternatives.length < 2) return false;
  const literal = alternatives.map((a) => (/^[\w ]*$/.test(a) ? a : null));
  for (let i = 0; i < alternatives.length; i++) {
    for (let j = i + 1; j < alternatives.length; j++) {
      const a = literal[i];
      const b = literal[j];
      if (a === null || b === null) {
        if (alternatives[i] === alternatives[j]) return true;
        continue;
      }
      if (a.startsWith(b) || b.startsWith(a)) return true;
    }
  }
  return false;
}

function shown(pattern: string, closeAt: number): string {
  let depth = 0;
  for (let i = closeAt; i >= 0; i--) {
    if (pattern[i] === ')' && pattern[i - 1] !== '\\') depth++;
    if (pattern[i] === '(' && pattern[i - 1] !== '\\') depth--;
    if (depth === 0) return pattern.slice(i, closeAt + 2);
  }
  return pattern;
}
