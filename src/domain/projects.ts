import type { RequestContext } from '../context.ts';
import { TribunalError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Project } from '../schemas.ts';
import type { ProjectRecord } from '../store/types.ts';
import { conflictToError } from './conflicts.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller'>;

export const projectToWire = ({ org_id: _org, ...wire }: ProjectRecord): Project => wire;

/** The project a new resource lands in: the given one (which must be the caller's) or the default. */
export async function resolveProjectId(ctx: Ctx, projectId: string | undefined | null): Promise<string> {
  if (projectId) {
    const project = await ctx.store.getProject(projectId);
    if (!project || project.org_id !== ctx.caller.org.id) {
      throw validationError(`project_id ${JSON.stringify(projectId)} is not a project of your organization.`, [{ field: 'project_id', message: 'unknown project' }]);
    }
    return project.id;
  }
  const fallback = await ctx.store.getDefaultProject(ctx.caller.org.id);
  if (!fallback) throw new TribunalError('internal_error', 500, 'Your organization has no default project.');
  return fallback.id;
}

/** Checks a project filter: another org's project id answers an empty list would hide a typo, so refuse it. */
export async function checkProjectFilter(ctx: Ctx, projectId: string | undefined): Promise<void> {
  if (projectId) await resolveProjectId(ctx, projectId);
}

export async function createProject(ctx: Ctx, input: { name: string; description?: string }): Promise<Project> {
  const record: ProjectRecord = {
    id: newId('prj'),
    org_id: ctx.caller.org.id,
    name: input.name,
    description: input.description ?? '',
    is_default: false,
    created_at: new Date().toISOString(),
  };
  try {
    await ctx.store.createProject(record);
  } catch (err) {
    throw conflictToError(err, 'choose another name.');
  }
  return projectToWire(record);
}
