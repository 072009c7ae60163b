/**
 * The departure regression's variants and fits as plain data: what ZoneState carries from one
 * state to the next (departure-regression.ts makes them).
 */

/** One departure regression of the two, and what its rows hold. */
export interface DepartureVariant {
  /** Whether the four-week hour-of-day mean less the daily profile is a dense input. */
  readonly fourWeeks: boolean;
}

export interface DepartureFit {
  readonly coefficients: Float64Array;
  /**
   * The mean of what the daily base missed, per slot of the week, over the training rows (0
   * where fewer than two: the fit, leaving each row out, saw 0 there).
   */
  readonly offsets: Float64Array;
}
