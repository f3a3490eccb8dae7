// Counts the fdatasync calls the stores make (through fs.fdatasync, as every group commit does),
// without changing them: for the tests that hold a commit to one sync per group.
import fs from 'node:fs';

export function countFdatasyncs(): { readonly count: number; restore(): void } {
  const real = fs.fdatasync;
  let count = 0;
  fs.fdatasync = ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
    count++;
    return real(fd, cb);
  }) as typeof fs.fdatasync;
  return {
    get count() {
      return count;
    },
    restore: () => {
      fs.fdatasync = real;
    },
  };
}
