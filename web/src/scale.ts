/**
 * One colour scale for every zone and basis: viridis (perceptually uniform, readable with the
 * common colour-vision deficiencies and in greyscale), reversed so that low intensity is light
 * yellow-green and high intensity dark purple. Values are always printed too: colour is never
 * the only carrier of a number.
 */

export const SCALE_MAX = 800;
// viridis at 0, 0.2, ..., 1, from high intensity to low.
const STOPS = ['#440154', '#414487', '#2a788e', '#22a884', '#7ad151', '#fde725'].reverse();

const rgb = (hex: string): [number, number, number] => [
  parseInt(hex.slice(1, 3), 16),
  parseInt(hex.slice(3, 5), 16),
  parseInt(hex.slice(5, 7), 16),
];

export function colourFor(value: number): string {
  const x = Math.min(Math.max(value / SCALE_MAX, 0), 1) * (STOPS.length - 1);
  const i = Math.min(Math.floor(x), STOPS.length - 2);
  const f = x - i;
  const a = rgb(STOPS[i]!);
  const b = rgb(STOPS[i + 1]!);
  const mix = a.map((channel, k) => Math.round(channel + (b[k]! - channel) * f));
  return `rgb(${mix.join(' ')})`;
}

/** Black or white, whichever contrasts more with the background (WCAG relative luminance). */
export function textOn(background: string): string {
  const channels = (/\d+ \d+ \d+/.exec(background)?.[0] ?? '0 0 0').split(' ').map(Number);
  const linear = channels.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * linear[0]! + 0.7152 * linear[1]! + 0.0722 * linear[2]!;
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#000' : '#fff';
}

export const LEGEND_GRADIENT = `linear-gradient(to right, ${STOPS.join(', ')})`;
