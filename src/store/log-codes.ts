// The log index's interning: strings to small integer codes, and sets of strings to sets of codes
// (split from log-index.ts, which keeps the columns and the filters).

/** Interns strings to small integer codes. */
export class StringCodes {
  private readonly byString = new Map<string, number>();
  readonly strings: string[] = [];
  code(s: string): number {
    let c = this.byString.get(s);
    if (c === undefined) {
      c = this.strings.length;
      this.strings.push(s);
      this.byString.set(s, c);
    }
    return c;
  }
  find(s: string): number {
    return this.byString.get(s) ?? -1;
  }
}

/** Interns sets of strings as sets of their codes (sorted, without repeats). */
export class CodeSets {
  /** By the strings as given, joined: the common case (the same list again) costs one lookup. */
  private readonly byList = new Map<string, number>();
  private readonly byCodes = new Map<string, number>();
  readonly sets: Int32Array[] = [];
  constructor(private readonly codes: StringCodes) {}
  code(strings: string[]): number {
    const list = strings.join('\u0000');
    let c = this.byList.get(list);
    if (c === undefined) {
      const sorted = [...new Set(strings.map((s) => this.codes.code(s)))].sort((a, b) => a - b);
      const key = sorted.join(',');
      c = this.byCodes.get(key);
      if (c === undefined) {
        c = this.sets.length;
        this.sets.push(Int32Array.from(sorted));
        this.byCodes.set(key, c);
      }
      this.byList.set(list, c);
    }
    return c;
  }
}
