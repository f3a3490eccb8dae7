// Where `tribunal keys` runs its command: through the running server when it owns the JSON data
// directory (the store's single-writer channel), else on the configured store opened briefly.
import type { Config } from '../config.ts';
import { KeyCommandError, runKeyCommand, type KeyCommand } from '../key-commands.ts';
import { openStore } from '../store/index.ts';
import { singleWriter, SingleWriterCommandError } from '../store/single-writer.ts';

export async function keyCommand(config: Config, cmd: KeyCommand): Promise<unknown> {
  const socket = config.store === 'json' ? singleWriter.ownerSocket(config.dataDir) : null;
  if (socket) {
    try {
      return await singleWriter.send(socket, cmd);
    } catch (err) {
      if (err instanceof SingleWriterCommandError && (err.code === 'not_found' || err.code === 'invalid')) throw new KeyCommandError(err.code, err.message);
      throw err;
    }
  }
  const store = await openStore(config, { role: 'cli' });
  try {
    return await runKeyCommand(store, config, cmd);
  } finally {
    await store.close();
  }
}
