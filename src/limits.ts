// The configured size limits on validated input (text, contexts, tags), applied by invokeTool to
// every operation and by the dataset import to every line. Base layer: it needs only the config.
import type { Config } from './config.ts';
import { validationError } from './errors.ts';

/**
 * Walks validated input and enforces the configured size limits: every string at most
 * `textChars` characters, `contexts` at most `contexts` items. Zod schemas stay static (they are
 * published as JSON Schema); the limits are configuration.
 */
export function enforceLimits(value: unknown, limits: Config['limits'], path: string[] = []): void {
  walk(value, limits, [...path]);
}

/**
 * enforceLimits over one path that grows and shrinks as the walk goes (a run's input is walked on
 * every call: a path array per field and an entries array per object cost an allocation each,
 * issue 33). The path is joined only for an error.
 */
function walk(value: unknown, limits: Config['limits'], path: string[]): void {
  if (typeof value === 'string') {
    if (value.length > limits.textChars) {
      throw validationError(`${path.join('.') || 'value'} is ${value.length} characters; the limit is ${limits.textChars} (TRIBUNAL_MAX_TEXT).`, [
        { field: path.join('.'), message: `at most ${limits.textChars} characters` },
      ]);
    }
  } else if (Array.isArray(value)) {
    if (path[path.length - 1] === 'tags') checkTags(value, limits, path.join('.'));
    if (path[path.length - 1] === 'contexts' && value.length > limits.contexts) {
      throw validationError(`contexts has ${value.length} items; the limit is ${limits.contexts} (TRIBUNAL_MAX_CONTEXTS).`, [
        { field: path.join('.'), message: `at most ${limits.contexts} items` },
      ]);
    }
    for (let i = 0; i < value.length; i++) {
      path.push(String(i));
      walk(value[i], limits, path);
      path.pop();
    }
  } else if (value && typeof value === 'object') {
    // for...in over own keys: Object.entries' order, without its arrays.
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      path.push(key);
      walk((value as Record<string, unknown>)[key], limits, path);
      path.pop();
    }
  }
}

/** Tags are stored and indexed with every log: bounded before any model call is paid for. */
function checkTags(tags: unknown[], limits: Config['limits'], field: string): void {
  if (tags.length > limits.tags) {
    throw validationError(`${field} has ${tags.length} tags; the limit is ${limits.tags} (TRIBUNAL_MAX_TAGS).`, [{ field, message: `at most ${limits.tags} tags` }]);
  }
  tags.forEach((tag, i) => {
    if (typeof tag === 'string' && tag.length > limits.tagChars) {
      throw validationError(`${field}.${i} is ${tag.length} characters; a tag is at most ${limits.tagChars} (TRIBUNAL_MAX_TAG_CHARS).`, [
        { field: `${field}.${i}`, message: `at most ${limits.tagChars} characters` },
      ]);
    }
  });
}
