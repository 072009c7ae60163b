import { InvalidArgumentError } from 'commander';

/** A commander parser of a whole number from `min` to `max` (`unit`: what it counts, for the error). */
export function wholeNumber(min: number, max: number, unit?: string): (value: string) => number {
  return (value) => {
    const text = value.trim();
    const number = Number(text);
    if (!/^\d+$/.test(text) || number < min || number > max) {
      throw new InvalidArgumentError(
        `expected a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max}.`,
      );
    }
    return number;
  };
}
