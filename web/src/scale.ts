/**
 * One colour scale for every zone and basis, read without a key as Electricity Maps' and the
 * Carbon Intensity API's are: clean is green, then yellow, orange, red, and dirty is dark
 * red-brown. Its lightness falls steadily from 0 to 800 g (CIE L* 86, 81, 71, 59, 48, 36, 24, 13
 * at every 100 g), so it still reads in order with protanopia, deuteranopia or tritanopia
 * (Machado 2009 simulation: L* stays monotonic, and every 50 g step stays at least 4 ΔE apart)
 * and in greyscale. Values are always printed too: colour is never the only carrier of a number.
 */

import type { Level } from './api.js';

export const SCALE_MAX = 800;
/** Evenly spaced from 0 to SCALE_MAX: pale green, yellow, orange, red, dark red, brown. */
const STOPS = ['#aee594', '#ecd36a', '#ec9442', '#cf4a3a', '#8a2331', '#3a160b'];
/** The legend's labelled ticks, in gCO2eq/kWh. */
export const LEGEND_TICKS = [0, 200, 400, 600, 800] as const;

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

/**
 * The level words (extensions §11) in the scale's own colours, cleanest first: a word says where
 * a value stands within its zone's last 30 days, so it takes the colour of that rank (very-low
 * the scale's pale green, very-high its dark red), not of the value.
 */
const stopColour = (k: number) => colourFor((SCALE_MAX / (STOPS.length - 1)) * k);
export const LEVEL_COLOUR: Readonly<Record<Level, string>> = {
  'very-low': stopColour(0),
  low: stopColour(1),
  moderate: stopColour(2),
  high: stopColour(3),
  'very-high': stopColour(4),
};

/** "very low", as people read it; the API's word is "very-low". */
export const levelWord = (level: Level): string => level.replace('-', ' ');
