/**
 * Hand-overs inside one forecast: where the model (or a model's fit) serving one stretch of the
 * horizon gives way to another, the new one starts from where the old one stood and its own
 * shape takes over within a few hours, instead of jumping by the difference of their levels (the
 * demo's DE forecast jumped about 115 g where the day-ahead ended: issue 19).
 */

/** E-folding time of the old level's offset after a hand-over, in slots of an hour. */
export const HAND_OVER_HOURS = 3;

/**
 * The values of `sources[choice[i]]` slot by slot, each change of source blended: from slot `b`
 * where the source changes, `offset * exp(-(i - b + 1) / tau)` is added, `offset` being what the
 * old blend stood at in slot `b - 1` minus the new source's own value there. The step into `b` is
 * then the new source's own step. A NaN in the source chosen stays NaN (and is no hand-over: a
 * forecast that ends, ends).
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
      const before = source[i - 1]!;
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
