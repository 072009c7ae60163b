/**
 * Hand-overs inside one forecast: where the model (or a model's fit) serving one stretch of the
 * horizon gives way to another, the new one starts from where the old one stood and its own
 * shape takes over within a few hours, instead of jumping by the difference of their levels (the
 * demo's DE forecast jumped about 115 g where the day-ahead ended: issue 19).
 */

/** E-folding time of the old level's offset after a hand-over, in slots of an hour. */
const HAND_OVER_HOURS = 3;

/**
 * The values of `sources[choice[i]]` slot by slot, each change of source blended: from slot `b`
 * where the source changes, `offset * exp(-(i - b + 1) / tau)` is added, `offset` being what the
 * old blend stood at in slot `b - 1` minus the new source's value there: as if the new source,
 * moved by `offset`, had served from `b - 1`, the offset fading from there. A source with no value
 * in slot `b - 1` stands there where its own step from `b` to `b + 1`, carried back, puts it: the
 * models give a fit's values only in the hours it serves, since outside them a fit can be wild (a
 * regression's solar coefficient fitted on night and morning hours put an evening hour at +27,000 g
 * in the demo). A NaN in the source chosen stays NaN (and is no hand-over: a forecast that ends,
 * ends).
 */
export function blendHandOvers(
  sources: readonly Float64Array[],
  choice: ArrayLike<number>,
  slotsPerHour: number,
): Float64Array {
  const out = new Float64Array(choice.length);
  const tau = HAND_OVER_HOURS * slotsPerHour;
  let offset = 0;
  let since = 0;
  for (let i = 0; i < choice.length; i++) {
    const source = sources[choice[i]!]!;
    if (i > 0 && choice[i] !== choice[i - 1]) {
      const before = Number.isFinite(source[i - 1]!)
        ? source[i - 1]!
        : carriedBack(source, choice, i);
      const stood = out[i - 1]!;
      offset = Number.isFinite(before) && Number.isFinite(stood) ? stood - before : 0;
      since = 0;
    }
    since++;
    const own = source[i]!;
    out[i] = offset === 0 ? own : own + offset * Math.exp(-since / tau);
  }
  return out;
}

/** Where `source`, chosen from slot `b` on, would have stood in slot `b - 1` by its own step. */
function carriedBack(source: Float64Array, choice: ArrayLike<number>, b: number): number {
  const next = b + 1 < choice.length && choice[b + 1] === choice[b] ? source[b + 1]! : Number.NaN;
  return Number.isFinite(next) ? 2 * source[b]! - next : source[b]!;
}
