// One process at a time may own a JSON data directory: lowdb has no lock between processes, so two
// writers would silently overwrite each other. The lock is a file created with O_EXCL that names its
// owner; a lock whose owner is gone (crash, kill -9) is taken over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface LockOwner {
  pid: number;
  host: string;
  role: 'server' | 'cli';
  since: string;
  /** Where a running server accepts admin commands (see admin-socket.ts). */
  admin_socket?: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `The data directory ${dataDir} is in use by a Tribunal ${owner.role} (pid ${owner.pid} on ${owner.host}, since ${owner.since}). ` +
        `Only one process may use a JSON data directory: stop that process, or set TRIBUNAL_DATA_DIR to another directory. ` +
        `To run several instances, use TRIBUNAL_STORE=postgres.`,
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return false; // a lock naming us before we took it is left over from a crash
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readLockOwner(dataDir: string): LockOwner | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, 'tribunal.lock'), 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

/** The live owner of the lock, or null when nobody (alive) holds it. */
export function liveLockOwner(dataDir: string): LockOwner | null {
  const owner = readLockOwner(dataDir);
  if (!owner) return null;
  if (owner.host !== os.hostname()) return owner; // cannot check another machine's pids: assume alive
  return isAlive(owner.pid) ? owner : null;
}

export class DataDirLock {
  private constructor(
    private readonly file: string,
    readonly owner: LockOwner,
  ) {}

  /**
   * Takes the lock, waiting up to `waitMs` for a short-lived holder (the CLI) to finish.
   * Throws DataDirLockedError when another live process holds it.
   */
  static async acquire(dataDir: string, role: LockOwner['role'], opts: { waitMs?: number; adminSocket?: string } = {}) {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'tribunal.lock');
    const owner: LockOwner = {
      pid: process.pid,
      host: os.hostname(),
      role,
      since: new Date().toISOString(),
      ...(opts.adminSocket ? { admin_socket: opts.adminSocket } : {}),
    };
    const deadline = Date.now() + (opts.waitMs ?? 0);
    let unreadableTries = 0;
    for (;;) {
      try {
        fs.writeFileSync(file, JSON.stringify(owner), { flag: 'wx' });
        return new DataDirLock(file, owner);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const current = readLockOwner(dataDir);
      if (!current && unreadableTries++ < 10) {
        // Another process may be between creating the file and writing its content.
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      if (current && (current.host !== owner.host || isAlive(current.pid))) {
        if (Date.now() < deadline && current.role === 'cli') {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        throw new DataDirLockedError(dataDir, current);
      }
      // Stale (or unreadable half-written) lock: move it aside atomically, then try again.
      // rename() succeeds for exactly one of several racing processes.
      try {
        fs.renameSync(file, `${file}.stale-${process.pid}`);
        fs.rmSync(`${file}.stale-${process.pid}`, { force: true });
      } catch {
        /* another process took it over first; loop and look again */
      }
    }
  }

  release(): void {
    try {
      const current = JSON.parse(fs.readFileSync(this.file, 'utf8')) as LockOwner;
      if (current.pid === this.owner.pid && current.since === this.owner.since) fs.rmSync(this.file, { force: true });
    } catch {
      /* already gone */
    }
  }
}
