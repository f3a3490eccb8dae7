// The scoring bands of a rubric, read back from its text. Every preset and every generated rubric
// states three contiguous bands in interval notation, one line each:
//   HIGH [0.7, 1.0]: ...
//   MIDDLING [0.4, 0.7): ...
//   LOW [0.0, 0.4): ...
// so that no score falls in a hole between bands, and a demonstration's score can be checked against
// the band its justification names ("... Band: LOW."). The shipped-presets test and the check of
// generated demonstrations both use this parser; it is strict so that a malformed rubric fails loudly.

export const BAND_NAMES = ['LOW', 'MIDDLING', 'HIGH'] as const;
export type BandName = (typeof BAND_NAMES)[number];

export interface Band {
  name: BandName;
  /** Inclusive lower bound. */
  min: number;
  /** Upper bound: inclusive only for the top band (1.0). */
  max: number;
  maxInclusive: boolean;
}

/** The one convention every preset and generated rubric uses. */
export const STANDARD_BANDS: readonly Band[] = [
  { name: 'LOW', min: 0, max: 0.4, maxInclusive: false },
  { name: 'MIDDLING', min: 0.4, max: 0.7, maxInclusive: false },
  { name: 'HIGH', min: 0.7, max: 1, maxInclusive: true },
];

const fmt = (n: number) => n.toFixed(1);

/** The label that opens a band's line, e.g. `MIDDLING [0.4, 0.7)`. */
export function bandLabel(name: BandName): string {
  const band = STANDARD_BANDS.find((b) => b.name === name)!;
  return `${band.name} [${fmt(band.min)}, ${fmt(band.max)}${band.maxInclusive ? ']' : ')'}`;
}

/**
 * The closing line of every rubric: how the bands meet and where a score goes inside its band.
 * Written once here so presets and generated rubrics say exactly the same thing.
 */
export const SCALE_RULE =
  'Scale: the bands meet without gaps (0.4 exactly is MIDDLING, 0.7 exactly is HIGH). The most severe failure decides the band. ' +
  "Inside a band, start at its middle; move toward its top when the response's lapses are fewer or milder than the band describes, " +
  'and toward its bottom when they come close to the band below.';

const BAND_LINE = /^(HIGH|MIDDLING|LOW) \[(\d\.\d+), (\d\.\d+)([\])]): \S/;
// Any other way of writing a band or range, e.g. the old `HIGH (0.8-1.0):`, is an error, not prose.
const LOOSE_BAND = /^\s*(HIGH|MIDDLING|LOW)\s*([([][^)\]]*[)\]])?\s*:/i;
const LOOSE_RANGE = /\b[01]\.\d\s*[-–]\s*[01]\.\d\b/;

export class RubricBandError extends Error {}

/** The rubric's bands, lowest first; throws RubricBandError when they are malformed, overlap or leave a hole. */
export function parseBands(rubric: string): Band[] {
  const found = new Map<BandName, Band>();
  for (const line of rubric.split('\n')) {
    const m = BAND_LINE.exec(line);
    if (!m) {
      if (LOOSE_BAND.test(line)) throw new RubricBandError(`band line not in the form "NAME [min, max): criteria": ${JSON.stringify(line.slice(0, 60))}`);
      if (LOOSE_RANGE.test(line)) throw new RubricBandError(`score range outside a band line: ${JSON.stringify(line.slice(0, 60))}`);
      continue;
    }
    const name = m[1] as BandName;
    if (found.has(name)) throw new RubricBandError(`band ${name} is stated twice`);
    found.set(name, { name, min: Number(m[2]), max: Number(m[3]), maxInclusive: m[4] === ']' });
  }
  const bands = BAND_NAMES.map((name) => {
    const band = found.get(name);
    if (!band) throw new RubricBandError(`band ${name} is missing`);
    return band;
  });
  if (bands[0].min !== 0) throw new RubricBandError('the LOW band must start at 0.0');
  const top = bands[bands.length - 1];
  if (top.max !== 1 || !top.maxInclusive) throw new RubricBandError('the HIGH band must end at 1.0, inclusive: [x, 1.0]');
  for (let i = 0; i < bands.length; i++) {
    const band = bands[i];
    if (!(band.min < band.max)) throw new RubricBandError(`band ${band.name} is empty or reversed`);
    const next = bands[i + 1];
    if (!next) continue;
    if (band.maxInclusive) throw new RubricBandError(`band ${band.name} must exclude its upper bound ")" so it does not overlap ${next.name}`);
    if (band.max !== next.min) throw new RubricBandError(`bands ${band.name} and ${next.name} do not meet: ${fmt(band.max)} vs ${fmt(next.min)}`);
  }
  return bands;
}

export function bandOf(bands: readonly Band[], score: number): Band | undefined {
  return bands.find((b) => score >= b.min && (score < b.max || (b.maxInclusive && score === b.max)));
}

const STATED_BAND = /\sBand: (HIGH|MIDDLING|LOW)\.$/;

/** The band a demonstration's justification ends by naming (`... Band: LOW.`), or null. */
export function statedBand(justification: string): BandName | null {
  const m = STATED_BAND.exec(justification.trimEnd());
  if (!m) return null;
  // Exactly one verdict: a second "Band:" earlier would make the example ambiguous.
  return justification.split('Band:').length === 2 ? (m[1] as BandName) : null;
}

/** Problems of demonstrations against their rubric's bands; [] when every score lies in the band its justification names. */
export function demonstrationBandProblems(rubric: string, demos: ReadonlyArray<{ score: number; justification?: string }>, where = 'demonstrations'): string[] {
  let bands: Band[];
  try {
    bands = parseBands(rubric);
  } catch (err) {
    return [`rubric: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  demos.forEach((demo, i) => {
    const stated = demo.justification ? statedBand(demo.justification) : null;
    if (!stated) {
      problems.push(`${where}.${i}.justification must end with "Band: HIGH.", "Band: MIDDLING." or "Band: LOW." (once)`);
      return;
    }
    const band = bands.find((b) => b.name === stated)!;
    if (bandOf([band], demo.score) === undefined) {
      problems.push(`${where}.${i}: score ${demo.score} is outside ${bandLabel(stated)}, the band it is given`);
    }
  });
  return problems;
}
