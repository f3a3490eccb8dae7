// The agent skill in skills/ (issue 30, item 6): it is installable (SKILL.md with the frontmatter
// Claude Code and the .agents/skills convention read), and every MCP tool name, REST path and CLI
// command it teaches exists in this server, so an agent following it never calls what is not there.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { openApiDocument } from '../src/openapi.ts';
import { routes } from '../src/rest.ts';
import { allTools } from '../tools/index.ts';
import { ROOT } from './helpers/cli.ts';

const SKILLS = path.join(ROOT, 'skills');

/**
 * Doors the skill teaches that are mounted beside the REST route table rather than in it: the judge
 * proxy (SPEC section 13; src/proxy/router.ts, its base URL `/v1/judges/{}/openai` included) and the
 * OTLP receiver (section 14; src/traces/receiver.ts). Each must appear in its router's source.
 */
const OTHER_ROOMS = ['/v1/judges/{}/openai', '/v1/judges/{}/openai/chat/completions', '/v1/judges/openai/chat/completions', '/otel/v1/traces'];
const DOOR_SOURCES = ['src/proxy/router.ts', 'src/traces/receiver.ts'].map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8')).join('\n');

const markdownOf = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? markdownOf(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));

/** `/v1/judges/{judge_id}/` and `/v1/judges/:judge_id/` -> `/v1/judges/{}` (no trailing slash, no query). */
const normalize = (p: string) =>
  p
    .split('?')[0]
    .replace(/\{[^}/]*\}|:[a-z_]+|<[^>/]*>/g, '{}')
    .replace(/\/+$/, '');

function knownPaths(): Set<string> {
  const known = new Set(routes.map((r) => normalize(r.path)));
  for (const p of Object.keys((openApiDocument() as { paths: Record<string, unknown> }).paths)) known.add(normalize(p));
  known.add('/mcp');
  known.add('/v1'); // the base path itself, as in "the REST API under /v1/"
  return known;
}

/** Paths the text mentions: /v1/..., /otel/..., /mcp, /create-demo-user/, /healthz. */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w.])\/(?:v1|otel)\/[A-Za-z0-9_{}<>:\-./]*|\/mcp\b|\/create-demo-user\/|\/healthz/g)].map((m) => m[0].replace(/[.)]+$/, ''));
}

const TOOL_LIKE = /`((?:list|get|run|generate|create|update|delete)_[a-z_]+)`/g;

describe('the agent skill (skills/)', () => {
  const skills = fs.readdirSync(SKILLS, { withFileTypes: true }).filter((e) => e.isDirectory());

  test('each skill is installable: SKILL.md with a name matching its folder and a description', () => {
    assert.ok(skills.length >= 1);
    for (const skill of skills) {
      const text = fs.readFileSync(path.join(SKILLS, skill.name, 'SKILL.md'), 'utf8');
      const front = /^---\n([\s\S]*?)\n---\n/.exec(text);
      assert.ok(front, `${skill.name}/SKILL.md starts with YAML frontmatter`);
      const meta = parse(front[1]);
      assert.equal(meta.name, skill.name);
      assert.match(meta.name, /^[a-z0-9-]{1,64}$/);
      assert.ok(typeof meta.description === 'string' && meta.description.length > 50 && meta.description.length <= 1024);
      // Relative links inside the skill resolve to files that ship with it.
      for (const m of text.matchAll(/\]\((?!https?:)([^)#]+)\)/g)) assert.ok(fs.existsSync(path.join(SKILLS, skill.name, m[1])), `link ${m[1]}`);
    }
  });

  test('every tool name it mentions is one of the 14 MCP tools, and SKILL.md teaches all 14', () => {
    const names = new Set(allTools.map((t) => t.name));
    for (const skill of skills) {
      for (const file of markdownOf(path.join(SKILLS, skill.name))) {
        for (const m of fs.readFileSync(file, 'utf8').matchAll(TOOL_LIKE)) assert.ok(names.has(m[1]), `${path.relative(ROOT, file)} mentions ${m[1]}, which is no MCP tool`);
      }
      const main = fs.readFileSync(path.join(SKILLS, skill.name, 'SKILL.md'), 'utf8');
      for (const name of names) assert.ok(main.includes(`\`${name}\``), `SKILL.md does not teach ${name}`);
    }
  });

  test('every path it mentions is served (or is a door of another room, listed above)', () => {
    const known = knownPaths();
    const missing: string[] = [];
    let checked = 0;
    for (const file of skills.flatMap((s) => markdownOf(path.join(SKILLS, s.name)))) {
      for (const p of pathsIn(fs.readFileSync(file, 'utf8'))) {
        checked++;
        const n = normalize(p);
        if (!known.has(n) && !OTHER_ROOMS.includes(n)) missing.push(`${path.relative(ROOT, file)}: ${p}`);
      }
    }
    assert.ok(checked > 20, `only ${checked} paths found`);
    assert.deepEqual(missing, []);
    const merged = OTHER_ROOMS.filter((p) => known.has(p));
    assert.deepEqual(merged, [], 'these doors are in the route table now: remove them from OTHER_ROOMS');
    // The doors beside the route table are mounted by their routers (the base URL is a prefix of one).
    const unmounted = OTHER_ROOMS.filter((p) => !DOOR_SOURCES.includes(p.replace('{}', ':judge_id')));
    assert.deepEqual(unmounted, [], 'these doors are not mounted by src/proxy/router.ts or src/traces/receiver.ts');
  });

  test('the checks can fail: an unknown path and an unknown tool are caught', () => {
    assert.ok(!knownPaths().has(normalize('/v1/judges/{judge_id}/nonsense/')));
    assert.deepEqual(pathsIn('see `/v1/judges/{judge_id}/export/?format=json`.').map(normalize), ['/v1/judges/{}/export']);
    assert.deepEqual(
      [...'call `run_judges` now'.matchAll(TOOL_LIKE)].map((m) => m[1]),
      ['run_judges'],
    );
  });

  test('the CLI commands it mentions exist', () => {
    const usage = fs.readFileSync(path.join(ROOT, 'src/cli.ts'), 'utf8');
    for (const file of skills.flatMap((s) => markdownOf(path.join(SKILLS, s.name)))) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/`tribunal ([a-z-]+)(?: ([a-z-]+))?/g)) {
        const [, group, sub] = m;
        const line = usage.split('\n').find((l) => new RegExp(`^  ${group}\\b`).test(l));
        assert.ok(line, `tribunal ${group} is a command`);
        if (sub && line.includes('|')) assert.ok(line.split(/\s+/)[2].split('|').includes(sub), `tribunal ${group} ${sub} is a command`);
      }
    }
  });
});
