// issue 26 item 2: wherever two judges or evaluators can share a name (an organization's own beside a
// preset, or beside another organization's public one), the web app says whose each is. No DOM here,
// so Node tests import it as the browser does.

/**
 * Whose a judge or evaluator is: 'preset', 'yours' (one of ownProjectIds' projects) or 'another organization'.
 * @param {{ is_preset?: boolean, project_id: string | null }} r a judge or an evaluator
 * @param {Set<string>} ownProjectIds
 */
export function ownerOf(r, ownProjectIds) {
  if (r.is_preset) return 'preset';
  if (r.project_id && ownProjectIds.has(r.project_id)) return 'yours';
  return 'another organization';
}

/**
 * A label per item of list, by id: its name, with its owner in brackets when another item shares the name.
 * @param {Array<{ id: string, name: string, is_preset?: boolean, project_id: string | null }>} list judges or evaluators
 * @param {Set<string>} ownProjectIds
 */
export function ownerLabels(list, ownProjectIds) {
  /** @type {Map<string, number>} */
  const count = new Map();
  for (const r of list) count.set(r.name, (count.get(r.name) ?? 0) + 1);
  return new Map(list.map((r) => [r.id, (count.get(r.name) ?? 0) > 1 ? `${r.name} (${ownerOf(r, ownProjectIds)})` : r.name]));
}
