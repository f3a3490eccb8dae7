// ISO 8601 text of an instant and back, for hot paths (issue 33: a sampled span's way formats about ten
// timestamps and parses three; on Node 20 Date#toISOString costs about 0.8 µs and Date.parse about
// 0.4 µs on the bench machine, a few percent of the span's CPU). Both keep the day of the last instant
// formatted: within that day the time of day is arithmetic; anything else (another day, a fraction of
// a millisecond, a year outside 0000-9999, text not in the canonical form) is Date's own answer, so
// the results are always exactly Date's.

const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** The day the fast paths know: [start, start + DAY_MS) and its 'YYYY-MM-DDT' text. */
let dayStart = Number.NaN;
let dayPrefix = '';

function learnDay(ms: number, iso: string): void {
  // Only the plain four-digit-year form (not ±YYYYYY): its first 11 characters are the day's.
  if (iso.length !== 24) return;
  dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  dayPrefix = iso.slice(0, 11);
}

/**
 * A second day, for formatting only: the last day an instant off the known day was formatted on.
 * The retention cutoff a week back, formatted on every OTLP export, falls on it (issue 33: Date's
 * toISOString on every export); msOfIso never reads it, and it never moves the known day.
 */
let otherStart = Number.NaN;
let otherPrefix = '';

/** The time of day of `r` ms into a day, after the day's 'YYYY-MM-DDT'. */
const timeOfDay = (prefix: string, r: number): string => {
  const s = (r / 1000) | 0;
  return `${prefix}${TWO[(s / 3600) | 0]}:${TWO[((s / 60) | 0) % 60]}:${TWO[s % 60]}.${THREE[r % 1000]}Z`;
};

/** new Date(ms).toISOString(), and its RangeError for an invalid time. */
export function isoOfMs(ms: number): string {
  const r = ms - dayStart;
  if (r >= 0 && r < DAY_MS && Number.isInteger(r)) return timeOfDay(dayPrefix, r);
  const o = ms - otherStart;
  if (o >= 0 && o < DAY_MS && Number.isInteger(o)) return timeOfDay(otherPrefix, o);
  const iso = new Date(ms).toISOString();
  // The day is learned only going forward and not past tomorrow: the retention cutoff a week back,
  // formatted on every OTLP export, would otherwise move it away from today's spans each time, and a
  // span stamped far ahead would hold it there. Any other day is the second one.
  if (Number.isInteger(ms) && iso.length === 24) {
    if (!(ms < dayStart) && ms < Date.now() + DAY_MS) learnDay(ms, iso);
    else {
      otherStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
      otherPrefix = iso.slice(0, 11);
    }
  }
  return iso;
}

/** The time now as ISO text: new Date().toISOString(). */
export const isoNow = (): string => isoOfMs(Date.now());

/** Two decimal digits at i of s, or -1. */
function digits2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Date.parse(text): the canonical 'YYYY-MM-DDTHH:mm:ss.sssZ' of the known day read directly. */
export function msOfIso(text: string): number {
  if (
    text.length === 24 &&
    text.startsWith(dayPrefix) &&
    dayPrefix !== '' &&
    text.charCodeAt(13) === 58 &&
    text.charCodeAt(16) === 58 &&
    text.charCodeAt(19) === 46 &&
    text.charCodeAt(23) === 90
  ) {
    const h = digits2(text, 11);
    const m = digits2(text, 14);
    const s = digits2(text, 17);
    const c = digits2(text, 20);
    const d = text.charCodeAt(22) - 48;
    if (h >= 0 && h < 24 && m >= 0 && m < 60 && s >= 0 && s < 60 && c >= 0 && d >= 0 && d <= 9) return dayStart + ((h * 60 + m) * 60 + s) * 1000 + c * 10 + d;
  }
  return Date.parse(text);
}
