// A resource's five operations (list, create, read, update, delete), as the REST table's resource()
// routes them. Every resource module names them the house's way (listDatasets, createDataset,
// getDataset, updateDataset, deleteDataset), so the set is found by the resource's name instead of
// being spelled out five times per resource; a module that misnames one does not compile.
import type { ToolDefinition } from '../tool.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = ToolDefinition<any, any, any>;

/** The five definitions of a resource's routes (list, create, read, update, delete). */
export interface ResourceOperations<O = Operation> {
  list: O;
  create: O;
  get: O;
  update: O;
  remove: O;
}

type NamedOperations<N extends string, S extends string> = Record<`list${N}s${S}` | `create${N}${S}` | `get${N}${S}` | `update${N}${S}` | `delete${N}${S}`, Operation>;

/** The operations of resource `name` in `module`; `suffix` is a module's common ending of their names (`Operation`). */
export function resourceOperations<N extends string, S extends string = ''>(module: NamedOperations<N, S>, name: N, suffix = '' as S): ResourceOperations {
  const named = (verb: string) => module[`${verb}${name}${suffix}` as keyof NamedOperations<N, S>];
  return { list: module[`list${name}s${suffix}`], create: named('create'), get: named('get'), update: named('update'), remove: named('delete') };
}
